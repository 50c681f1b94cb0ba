#include <iostream>
#include <string>
int main() {
    int lo = 1, hi = 1000;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        std::cout << "? " << mid << std::endl;
        std::string r;
        std::cin >> r;
        if (r == "correct") { lo = hi = mid; break; }
        if (r == "lower") hi = mid - 1; else lo = mid + 1;
    }
    std::cout << "! " << lo << std::endl;
}
