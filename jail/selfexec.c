/* Starting this binary again as another stage: the runner starts the init
 * stage (stage_spawn) and the allowlist proxy (proxyctl.c) through the
 * same child setup: fds moved onto their numbers, signals reset, the
 * parent-death signal, exec of /proc/self/exe. The runner runs it: C,
 * before the Go runtime, as the whole runner is (runner.c); the child of a
 * vfork runs it too. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

pid_t stage_spawn(const int *fds, int nfds, const int *out, int cgroup_fd)
{
	static char *const argv[] = {"jail", NULL};
	static char *const envp[] = {JAIL_STAGE_ENV "init", NULL};
	/* Above every target number first, so no dup2 below clobbers one. */
	int src[FD_NFIXED + RUN_MAX_TREES + 2], high[FD_NFIXED + RUN_MAX_TREES + 2];
	int n = nfds + (out ? 2 : 0);
	for (int i = 0; i < nfds; i++)
		src[i] = fds[i];
	if (out)
		src[nfds] = out[0], src[nfds + 1] = out[1];
	if (fds_above(src, n, 3 + nfds, high) < 0)
		return -1;
	/* The signals the runner ignores (SIGPIPE, SIGTTOU) are the init
	 * stage's default again; the caller's own ignored ones stay so, for
	 * the command (nohup). */
	sigset_t dfl;
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGTTOU);
	pid_t runner = getpid(), pid;
	if (cgroup_fd >= 0) {
		/* A fork, not a vfork (no CLONE_VM without a stack of its
		 * own), that the runner waits on until it execs. */
		struct clone_args args = {.flags = CLONE_VFORK | CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
					  .cgroup = (uint64_t)cgroup_fd};
		pid = (pid_t)syscall(SYS_clone3, &args, sizeof args);
	} else {
		pid = vfork();
	}
	if (pid == 0) {
		if (selfexec_fds(high, nfds, 3) < 0 || (out && selfexec_fds(high + nfds, 2, 1) < 0))
			_exit(125);
		setsid();
		selfexec(argv, envp, &dfl, runner);
		_exit(125);
	}
	int err = errno;
	for (int i = 0; i < n; i++)
		close(high[i]);
	errno = err;
	return pid;
}
