// Tells the solution the test's number and writes the solution's reply to
// its output file; whether the reply is right is the checker's to say.
#include "testlib.h"

int main(int argc, char* argv[]) {
    registerInteraction(argc, argv);
    long long n = inf.readLong();
    std::cout << n << std::endl;
    long long reply = ouf.readLong(-4000000000LL, 4000000000LL, "reply");
    tout << reply << std::endl;
    quitf(_ok, "relayed %lld", reply);
}
