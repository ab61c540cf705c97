/*
 * The bench VM's timer (vmtest/agentbench.sh runs it in the guest, as
 * root): `clock [NAME=VALUE...] CMD [ARGS...]` forks, sets the NAME=VALUE
 * pairs in the child's environment, execs CMD with stdin, stdout and
 * stderr on /dev/null, waits for it and prints the nanoseconds from the
 * fork to its exit (CLOCK_MONOTONIC) and its exit status; `clock` alone
 * prints the clock. C and static because the guest is a busybox
 * initramfs, whose shell has no clock finer than a second, and the timed
 * span should hold the launcher's own fork and exec and nothing else.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long long start;
	int status, rc, null;
	pid_t pid;

	if (argc < 2) {
		printf("%lld\n", now_ns());
		return 0;
	}
	/* Opened before the clock starts: the child only dups it. */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0) {
		perror("clock: /dev/null");
		return 125;
	}
	start = now_ns();
	pid = fork();
	if (pid < 0) {
		perror("clock: fork");
		return 125;
	}
	if (pid == 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		while (argv[1] && strchr(argv[1], '=') && putenv(argv[1]) == 0)
			argv++;
		if (!argv[1])
			_exit(127);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("clock: waitpid");
		return 125;
	}
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	printf("%lld %d\n", now_ns() - start, rc);
	return 0;
}
