// pairs: "n m" on the first line (1..100, 1..10 in the test set "pretests";
// both even in the group "even"), then n integers in [-10^9, 10^9] with one
// space between them, then a lowercase word of 1..10 letters.
#include "testlib.h"

int main(int argc, char *argv[]) {
    registerValidation(argc, argv);
    int limit = validator.testset() == "pretests" ? 10 : 100;
    int n = inf.readInt(1, limit, "n");
    inf.readSpace();
    int m = inf.readInt(1, limit, "m");
    inf.readEoln();
    if (validator.group() == "even")
        ensuref(n % 2 == 0 && m % 2 == 0, "n and m must be even in group %s", validator.group().c_str());
    inf.readInts(n, -1000000000, 1000000000, "a");
    inf.readEoln();
    inf.readToken("[a-z]{1,10}", "word");
    inf.readEoln();
    inf.readEof();
}
