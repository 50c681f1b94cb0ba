#include <cstdio>
// Adds in 32 bits: wrong when a sum leaves int's range, right otherwise.
int main() {
    int q;
    if (scanf("%d", &q) != 1) return 1;
    for (int i = 0; i < q; i++) {
        int a, b;
        if (scanf("%d %d", &a, &b) != 2) return 1;
        printf("%d\n", (int)((unsigned)a + (unsigned)b));
    }
}
