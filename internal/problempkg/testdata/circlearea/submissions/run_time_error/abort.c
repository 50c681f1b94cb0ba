#include <math.h>
#include <stdio.h>
#include <stdlib.h>
/* Crashes on large circles. */
int main(void) {
    double r;
    if (scanf("%lf", &r) != 1) return 1;
    if (r > 500) abort();
    printf("%.10f\n", acos(-1.0) * r * r);
    return 0;
}
