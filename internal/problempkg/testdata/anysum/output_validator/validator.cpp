// Accepts any two positive integers whose sum is the input's n.
#include <fstream>
#include <iostream>
#include <string>
#include "validate.h"

int main(int argc, char **argv) {
    if (argc < 4) return 1;
    feedback_dir = argv[3];
    std::ifstream in(argv[1]);
    long long n;
    in >> n;
    long long a, b;
    if (!(std::cin >> a >> b)) wrong("expected two integers");
    if (a < 1 || b < 1) wrong("%lld and %lld are not both positive", a, b);
    if (a + b != n) wrong("%lld + %lld != %lld", a, b, n);
    std::string extra;
    if (std::cin >> extra) wrong("trailing output: %s", extra.c_str());
    accept();
}
