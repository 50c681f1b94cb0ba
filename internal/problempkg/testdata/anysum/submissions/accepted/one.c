#include <stdio.h>
int main(void) {
    long long n;
    if (scanf("%lld", &n) != 1) return 1;
    printf("%lld %lld\n", 1LL, n - 1);
    return 0;
}
