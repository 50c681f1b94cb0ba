// Validator: two integers |a|, |b| <= 2*10^9 separated by one space.
#include "testlib.h"

int main(int argc, char* argv[]) {
    registerValidation(argc, argv);
    inf.readLong(-2000000000LL, 2000000000LL, "a");
    inf.readSpace();
    inf.readLong(-2000000000LL, 2000000000LL, "b");
    inf.readEoln();
    inf.readEof();
}
