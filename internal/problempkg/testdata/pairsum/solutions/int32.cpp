#include <cstdio>
// Adds in 32 bits: wrong when the sum leaves int's range.
int main() {
    int a, b;
    if (scanf("%d %d", &a, &b) != 2) return 1;
    printf("%d\n", (int)((unsigned)a + (unsigned)b));
}
