// Checker: the output is the sum, as one integer; nothing after it.
#include "testlib.h"

int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    long long want = ans.readLong();
    long long got = ouf.readLong(-4000000000LL, 4000000000LL, "sum");
    if (got != want) quitf(_wa, "expected %lld, found %lld", want, got);
    quitf(_ok, "the sum is %lld", got);
}
