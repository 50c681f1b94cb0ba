#include <cstdio>
#include "k.h"

int main() {
    long long n;
    if (std::scanf("%lld", &n) != 1) return 1;
    std::printf("%lld\n", n + K);
    return 0;
}
