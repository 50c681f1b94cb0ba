// icmp: the output is the answer's one signed 32-bit integer, and nothing more.
#include "testlib.h"

int main(int argc, char *argv[]) {
    setName("one signed 32-bit integer");
    registerTestlibCmd(argc, argv);
    int want = ans.readInt();
    int got = ouf.readInt();
    if (got != want)
        quitf(_wa, "expected %d, found %d", want, got);
    quitf(_ok, "the answer is %d", got);
}
