// Generator: two integers in [-max, max], or with "same" equal ones.
// Usage: gen MAX [same] (the seed is the whole command line, as testlib's).
#include "testlib.h"
#include <string>

int main(int argc, char* argv[]) {
    registerGen(argc, argv, 1);
    long long max = std::atoll(argv[1]);
    long long a = rnd.next(-max, max);
    long long b = argc > 2 && std::string(argv[2]) == "same" ? a : rnd.next(-max, max);
    println(a, b);
}
