// Validator: q in [1, 100], then q lines of two integers |a|, |b| <= 2*10^9.
#include "testlib.h"

int main(int argc, char* argv[]) {
    registerValidation(argc, argv);
    int q = inf.readInt(1, 100, "q");
    inf.readEoln();
    for (int i = 0; i < q; i++) {
        inf.readLong(-2000000000LL, 2000000000LL, "a");
        inf.readSpace();
        inf.readLong(-2000000000LL, 2000000000LL, "b");
        inf.readEoln();
    }
    inf.readEof();
}
