#include <stdio.h>
/* Never flushes its query (standard output to a pipe is fully buffered):
   both sides wait for the other until the time limit. */
int main(void) {
    char r[16];
    printf("? 500\n");
    if (scanf("%15s", r) != 1) return 0;
    printf("! 500\n");
    return 0;
}
