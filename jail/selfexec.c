/* Starting this binary again as another stage: the allowlist proxy
 * (proxyctl.c), whose child gets its fds moved onto their numbers, signals
 * reset, the parent-death signal, and an exec of /proc/self/exe; the init
 * stage (stagestart.c) moves its fds the same way but is not exec'd. The
 * runner runs it: C, before the Go runtime, as the whole runner is
 * (runner.c); the child of a vfork runs it too. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "jail/runplan.h"
#include "jail/selfexec.h"
#include "jail/stage.h"

int fds_above(const int *src, int n, int floor, int *high)
{
	for (int i = 0; i < n; i++) {
		if ((high[i] = fcntl(src[i], F_DUPFD_CLOEXEC, floor)) >= 0)
			continue;
		int err = errno;
		while (i-- > 0)
			close(high[i]);
		errno = err;
		return -1;
	}
	return 0;
}

int selfexec_fds(const int *high, int n, int base)
{
	for (int i = 0; i < n; i++)
		if (dup2(high[i], base + i) < 0)
			return -1;
	return 0;
}

void selfexec(char *const argv[], char *const envp[], const sigset_t *dfl, pid_t parent)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < 32; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sigismember(dfl, sig))
			signal(sig, SIG_DFL);
	/* Checked against the parent's pid after it is set, as it must be: a
	 * parent that died before would never send it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(125);
	execve("/proc/self/exe", argv, envp);
}
