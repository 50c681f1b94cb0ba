#include <cstdio>
int main() {
    int q;
    if (scanf("%d", &q) != 1) return 1;
    for (int i = 0; i < q; i++) {
        long long a, b;
        if (scanf("%lld %lld", &a, &b) != 2) return 1;
        printf("%lld\n", a + b);
    }
}
