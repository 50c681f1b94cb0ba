// pairs -n N [-max M] [-bias B]: N pairs drawn with rnd.next and rnd.wnext,
// and a few doubles; the same arguments give the same test as testlib.
#include "testlib.h"

int main(int argc, char *argv[]) {
    registerGen(argc, argv, 1);
    int n = opt<int>("n");
    long long max = opt<long long>("max", 1000000000000LL);
    int bias = opt<int>("bias", 0);
    println(n);
    for (int i = 0; i < n; i++)
        println(rnd.next(-max, max), rnd.wnext(1, 1000, bias), rnd.next(1, 100));
    printf("%.6f %.6f %.6f\n", rnd.next(), rnd.next(10.0), rnd.wnext(5.0, bias));
    println(rnd.next(1u, 7u), rnd.next(1000000000000000000ULL), rnd.wnext(100LL, -30), rnd.wnext(100, 30));
}
