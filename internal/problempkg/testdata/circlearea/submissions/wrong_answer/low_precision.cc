#include <cstdio>
// pi as 3.14: off by more than the tolerance on every test.
int main() {
    double r;
    if (scanf("%lf", &r) != 1) return 1;
    printf("%.3f\n", 3.14 * r * r);
}
