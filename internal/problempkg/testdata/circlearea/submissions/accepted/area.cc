#include <cmath>
#include <cstdio>
int main() {
    double r;
    if (scanf("%lf", &r) != 1) return 1;
    printf("%.10f\n", M_PI * r * r);
}
