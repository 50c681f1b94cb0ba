// wcmp: the output is the answer's sequence of tokens, whitespace aside.
#include "testlib.h"

int main(int argc, char *argv[]) {
    setName("a sequence of tokens");
    registerTestlibCmd(argc, argv);
    int n = 0;
    std::string want, got;
    while (!ans.seekEof()) {
        n++;
        ans.readWordTo(want);
        if (ouf.seekEof())
            quitf(_wa, "answer has more tokens: the %d%s is missing", n, englishEnding(n).c_str());
        ouf.readWordTo(got);
        if (got != want)
            expectedButFound(_wa, want, got, "%d%s token", n, englishEnding(n).c_str());
    }
    quitf(_ok, "%d token(s)", n);
}
