// Checker: a point for each correct sum; each test is worth as many
// points as it has pairs, so quitp gives the test's own points.
#include "testlib.h"

int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    int q = inf.readInt();
    int correct = 0;
    for (int i = 0; i < q; i++) {
        long long want = ans.readLong();
        long long got = ouf.readLong(-4000000000LL, 4000000000LL, "sum");
        if (got == want) correct++;
    }
    if (correct == q) quitf(_ok, "all %d sums are correct", q);
    quitp(correct, "%d of %d sums are correct", correct, q);
}
