// yesno: one word, YES or NO in any case, the answer's.
#include "testlib.h"

int main(int argc, char *argv[]) {
    setName("YES or NO, in any case");
    registerTestlibCmd(argc, argv);
    std::string want = upperCase(ans.readToken());
    std::string got = upperCase(ouf.readToken("[yY][eE][sS]|[nN][oO]", "verdict"));
    if (got != want)
        quitf(_wa, "expected %s, found %s", want.c_str(), got.c_str());
    quitf(_ok, "answer is %s", got.c_str());
}
