// words SIZE: strings from patterns, a permutation, distinct values, a
// partition, a shuffle and picks; the seed is the whole command line.
#include "testlib.h"

int main(int argc, char *argv[]) {
    registerGen(argc, argv, 1);
    int size = opt<int>(1);
    println(rnd.next("[a-z]{1,10}"), rnd.next("x{2,3}[0-9]?(ab|c)"), rnd.next("[^a-zA-Z0-9 ]{5}"));
    println(rnd.next("%s-[A-C]{%d}", "id", size));
    println(rnd.perm(size, 1));
    println(rnd.distinct(size, 1000000000));
    println(rnd.distinct(size, 1, size + 1));
    println(rnd.partition(size, 3 * size));
    std::vector<int> v(size);
    for (int i = 0; i < size; i++)
        v[i] = i * i;
    shuffle(v.begin(), v.end());
    println(v);
    println(rnd.any(v), rnd.wany(v, 2), rnd.next(size, 2 * size));
}
