// points: the answer is "POINTS p", "INFO text" or "SCORE k"; the output a
// strict real with two digits after the point, which must be within [0, 10].
#include "testlib.h"

int main(int argc, char *argv[]) {
    setName("partial credit");
    registerTestlibCmd(argc, argv);
    double got = ouf.readStrictDouble(0, 10, 2, 2, "score");
    std::string kind = ans.readToken("POINTS|INFO|SCORE", "kind");
    if (kind == "POINTS")
        quitp(ans.readDouble(), "score %.2f", got);
    if (kind == "INFO")
        quitpi(ans.readToken(), format("score %.2f", got));
    quitp(ans.readInt(), "score %.2f", got);
}
