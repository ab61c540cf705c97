/* hog: the resource hogs the limits scripts contain, as a static binary
 * that runs in any profile.
 *   hog forkloop     fork forever, in every child too (the C fork bomb)
 *   hog mem MIB      allocate and touch MIB MiB, then say so
 *   hog spin         burn CPU until killed
 *   hog contloop FILE
 *                    append a line to FILE every 50 ms, with a timer that
 *                    has the kernel send this process SIGCONT every 20 ms:
 *                    what undoes a stop by SIGSTOP, not a frozen cgroup
 *   hog rtself       make itself a real-time (SCHED_FIFO) task, or fail */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void on_cont(int sig) { (void)sig; }

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
	if (argc >= 3 && !strcmp(argv[1], "contloop")) {
		struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGCONT};
		struct itimerspec every = {{0, 20000000}, {0, 20000000}};
		timer_t t;
		signal(SIGCONT, on_cont);
		if (timer_create(CLOCK_MONOTONIC, &sev, &t) < 0 || timer_settime(t, 0, &every, NULL) < 0) {
			perror("timer");
			return 1;
		}
		for (;;) {
			FILE *f = fopen(argv[2], "a");
			if (f) {
				fputs("x\n", f);
				fclose(f);
			}
			usleep(50000);
		}
	}
	if (argc >= 2 && !strcmp(argv[1], "rtself")) {
		struct sched_param sp = {.sched_priority = 10};
		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
			perror("rtself");
			return 1;
		}
		puts("rtself: real-time");
		return 0;
	}
	fprintf(stderr, "usage: hog forkloop | mem MIB | spin | contloop FILE | rtself\n");
	return 2;
}
