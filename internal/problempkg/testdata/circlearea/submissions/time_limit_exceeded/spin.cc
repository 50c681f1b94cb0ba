#include <cmath>
#include <cstdio>
// Right on small circles, spins on large ones.
int main() {
    double r;
    if (scanf("%lf", &r) != 1) return 1;
    volatile double s = 0;
    if (r > 500) for (;;) s += 1;
    printf("%.10f\n", M_PI * r * r);
}
