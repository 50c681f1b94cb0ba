#include <stdio.h>
int main(void) {
	int p, x;
	if (scanf("%d %d", &p, &x) != 2) return 1;
	printf("%d\n", p == 1 ? 0 : x + 1);
	return 0;
}
