// Interactive validator: the submission guesses the number in the input
// file with at most 10 queries "? y" (answered "lower", "higher" or
// "correct") and ends with "! y".
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

static std::string dir;

[[noreturn]] static void judge(int code, const std::string &msg) {
    std::ofstream(dir + "judgemessage.txt") << msg << "\n";
    std::exit(code);
}

int main(int argc, char **argv) {
    if (argc < 4) return 1;
    dir = argv[3];
    std::ifstream in(argv[1]);
    int secret;
    in >> secret;
    for (int queries = 0;;) {
        std::string op;
        long long y;
        if (!(std::cin >> op >> y)) judge(43, "the submission stopped before answering");
        if (op == "!") {
            if (y != secret) judge(43, "wrong answer " + std::to_string(y));
            std::string extra;
            if (std::cin >> extra) judge(43, "output after the answer");
            judge(42, "found in " + std::to_string(queries) + " queries");
        }
        if (op != "?") judge(43, "unknown operation " + op);
        if (++queries > 10) judge(43, "more than 10 queries");
        std::cout << (y > secret ? "lower" : y < secret ? "higher" : "correct") << std::endl;
    }
}
