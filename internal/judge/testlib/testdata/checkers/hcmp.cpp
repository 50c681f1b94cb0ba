// hcmp: one integer of any length, written as testlib writes integers.
#include "testlib.h"

int main(int argc, char *argv[]) {
    setName("one huge integer");
    registerTestlibCmd(argc, argv);
    std::string want = ans.readToken("0|-?[1-9][0-9]*", "answer");
    std::string got = ouf.readToken();
    if (!pattern("0|-?[1-9][0-9]*").matches(got))
        quitf(_pe, "expected an integer, found '%s'", compress(got).c_str());
    if (got != want)
        quitf(_wa, "expected '%s', found '%s'", compress(want).c_str(), compress(got).c_str());
    quitf(_ok, "the answer is %s", compress(got).c_str());
}
