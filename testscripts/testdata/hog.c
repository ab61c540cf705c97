/* hog: the resource hogs the limits scripts contain, as a static binary
 * that runs in any profile.
 *   hog forkloop     fork forever, in every child too (the C fork bomb)
 *   hog mem MIB      allocate and touch MIB MiB, then say so
 *   hog spin         burn CPU until killed */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "forkloop")) {
		for (;;)
			fork();
	}
	if (argc >= 3 && !strcmp(argv[1], "mem")) {
		size_t mib = strtoul(argv[2], NULL, 10);
		for (size_t i = 0; i < mib; i++) {
			char *p = malloc(1 << 20);
			if (!p) {
				printf("malloc failed after %zu MiB\n", i);
				return 1;
			}
			memset(p, 1, 1 << 20);
		}
		printf("allocated %zu MiB\n", mib);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "spin")) {
		for (volatile unsigned long n = 0;; n++)
			;
	}
	fprintf(stderr, "usage: hog forkloop | mem MIB | spin\n");
	return 2;
}
