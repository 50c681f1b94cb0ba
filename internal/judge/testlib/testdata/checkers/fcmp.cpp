// fcmp: the output's lines are the answer's, exactly.
#include "testlib.h"

int main(int argc, char *argv[]) {
    setName("exact lines");
    registerTestlibCmd(argc, argv);
    int n = 0;
    while (!ans.eof()) {
        n++;
        std::string want = ans.readString();
        if (ouf.eof())
            quitf(_wa, "%d%s line is missing", n, englishEnding(n).c_str());
        std::string got = ouf.readString();
        if (got != want)
            quitf(_wa, "%d%s lines differ - expected: '%s', found: '%s'", n, englishEnding(n).c_str(),
                  compress(want).c_str(), compress(got).c_str());
    }
    if (!ouf.eof())
        quitf(_wa, "the output has more than %d line(s)", n);
    quitf(_ok, "%d line(s)", n);
}
