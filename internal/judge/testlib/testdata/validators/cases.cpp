// cases: t test cases (1..5), each a line with a strict real in [0, 1] with
// 1..3 digits after the point and a line of a capital and lowercase letters
// and spaces (escaped: a pattern ignores bare spaces).
#include "testlib.h"

int main(int argc, char *argv[]) {
    registerValidation(argc, argv);
    int t = inf.readInt(1, 5, "t");
    inf.readEoln();
    for (int i = 1; i <= t; i++) {
        setTestCase(i);
        inf.readStrictDouble(0, 1, 1, 3, "p");
        inf.readEoln();
        inf.readLine("[A-Z][a-z\\ ]*", "text");
    }
    inf.readEof();
}
