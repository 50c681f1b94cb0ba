#include <cstdio>
// Sums in 32 bits: right on group1 and on the small test of group2.
int main() {
    int n;
    if (scanf("%d", &n) != 1) return 1;
    unsigned s = 0;
    for (int i = 0; i < n; i++) { unsigned x; scanf("%u", &x); s += x; }
    printf("%d\n", (int)s);
}
