// ncmp: the output is the answer's sequence of signed 64-bit integers.
#include "testlib.h"

int main(int argc, char *argv[]) {
    setName("a sequence of signed 64-bit integers");
    registerTestlibCmd(argc, argv);
    int n = 0;
    std::string first;
    while (!ans.seekEof() && !ouf.seekEof()) {
        n++;
        long long want = ans.readLong();
        long long got = ouf.readLong();
        if (got != want)
            quitf(_wa, "%d%s numbers differ - expected: '%s', found: '%s'", n, englishEnding(n).c_str(),
                  vtos(want).c_str(), vtos(got).c_str());
        if (n <= 5)
            first += (n > 1 ? " " : "") + vtos(got);
    }
    int extraAns = 0, extraOut = 0;
    while (!ans.seekEof()) ans.readLong(), extraAns++;
    while (!ouf.seekEof()) ouf.readLong(), extraOut++;
    if (extraAns > 0)
        quitf(_wa, "answer contains longer sequence [length = %d], but output contains %d elements", n + extraAns, n);
    if (extraOut > 0)
        quitf(_wa, "output contains longer sequence [length = %d], but answer contains %d elements", n + extraOut, n);
    quitf(_ok, "%d number(s): \"%s\"", n, compress(first).c_str());
}
