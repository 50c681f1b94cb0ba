#include <cstdio>
// 0 is not positive.
int main() {
    long long n;
    if (scanf("%lld", &n) != 1) return 1;
    printf("0 %lld\n", n);
}
