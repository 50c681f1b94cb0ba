#include <iostream>
#include <string>
// Counts up from 1: too many queries for most numbers.
int main() {
    for (int y = 1;; y++) {
        std::cout << "? " << y << std::endl;
        std::string r;
        if (!(std::cin >> r)) return 0;
        if (r == "correct") { std::cout << "! " << y << std::endl; return 0; }
    }
}
