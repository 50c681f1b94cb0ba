#include <cstdio>
// Counts to the sum one by one: too slow on large values.
int main() {
    long long a, b;
    if (scanf("%lld %lld", &a, &b) != 2) return 1;
    volatile long long s = a;
    for (long long i = 0; i < (b < 0 ? -b : b); i++) s += b < 0 ? -1 : 1;
    printf("%lld\n", (long long)s);
}
