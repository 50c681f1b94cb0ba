// rcmp6: doubles, each within 1E-6 of the answer's (absolute or relative).
#include "testlib.h"

const double EPS = 1E-6;

int main(int argc, char *argv[]) {
    setName("doubles within 1E-6");
    registerTestlibCmd(argc, argv);
    int n = 0;
    while (!ans.seekEof()) {
        n++;
        double want = ans.readDouble();
        double got = ouf.readDouble();
        if (!doubleCompare(want, got, EPS))
            quitf(_wa, "%d%s numbers differ - expected: '%.7f', found: '%.7f', error = '%.7f'", n,
                  englishEnding(n).c_str(), want, got, doubleDelta(want, got));
    }
    quitf(_ok, "%d number(s)", n);
}
