#include <cstdio>
// The right sum followed by output nobody asked for: testlib's checker
// refuses what follows the read tokens.
int main() {
    long long a, b;
    if (scanf("%lld %lld", &a, &b) != 2) return 1;
    printf("%lld 0\n", a + b);
}
