#include <cstdio>
// Scales in 32 bits: wrong once n/2 * 8 passes 2^31, right below.
int main() {
    int n;
    if (scanf("%d", &n) != 1) return 1;
    int a = n / 2;
    int scaled = (int)((unsigned)a * 8u) / 8;
    printf("%d %d\n", scaled, n - scaled);
}
