#include <math.h>
#include <stdio.h>
/* Any float format is accepted: %e instead of %f. */
int main(void) {
    double r;
    if (scanf("%lf", &r) != 1) return 1;
    printf("%.12e\n", acos(-1.0) * r * r);
    return 0;
}
