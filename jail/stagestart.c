/* Starting the init stage: a fork of the runner that goes straight on to
 * init_stage (init.c), with no exec between. An exec of this static binary
 * cost a cached call about a quarter of its page faults and half a
 * millisecond (glibc's start-up probes the CPU's caches with cpuid, which
 * traps in a VM); the fork costs the runner's page tables, which are few.
 *
 * An exec also gave the init stage a clean address space, and the jail's
 * PID 1 and the command (until its exec) are that stage. So the fork, as
 * soon as it is the runner's copy, wipes what of the runner's the jail
 * must never hold, and lets go of everything else an exec would have:
 *  - every fd but the stage's (close-on-exec ones included: the session's
 *    lock, the status record, the audit log, the cache's files);
 *  - every signal handler, the mask, the signals the runner ignores;
 *  - the network helper's configuration in the plan (bound credentials'
 *    real values, the run CA's key): zeroed;
 *  - the caller's command line and environment, which /proc/PID/cmdline
 *    and environ read: zeroed, the command line then "jail" as an exec
 *    left it, and environ empty;
 *  - the runner's stack, whose frames (live ones' unused arrays too) hold
 *    copies of what its calls worked on: the stage moves to a stack of
 *    its own and unmaps the old one's frames.
 * The rest of the runner's memory is the plan the stage is sent anyway and
 * the runner's own bookkeeping. PID 1 is made non-dumpable before anything
 * of the jail runs (init.c), as before.
 *
 * C, before the Go runtime, as the whole runner is (runner.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "jail/runplan.h"
#include "jail/selfexec.h"
#include "jail/stage.h"
#include "jail/stagestart.h"

/* struct caller_area is where the kernel put this process's start-up
 * data, from /proc/self/stat: the stack's frames are all below stack (the
 * address of argc), argv's strings are [args, args_end), the
 * environment's end at env_end. */
struct caller_area {
	uintptr_t stack, args, args_end, env_end;
};

static int caller_area(struct caller_area *a)
{
	char buf[2048];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* After the comm's ")", fields count from 3: startstack is the
	 * 28th, arg_start the 48th, env_end the 51st. */
	char *p = strrchr(buf, ')');
	unsigned long long v[52] = {0};
	if (!p)
		return -1;
	for (int field = 3; field <= 51; field++) {
		char *end;
		while (*p == ' ' || *p == ')')
			p++;
		v[field] = strtoull(p, &end, 10);
		/* The state (field 3) is a letter, not a number. */
		p = field == 3 ? p + 1 : end;
	}
	*a = (struct caller_area){.stack = v[28], .args = v[48], .args_end = v[49], .env_end = v[51]};
	if (!a->stack || a->stack > a->args || a->args > a->args_end || a->args_end > a->env_end ||
	    a->env_end - a->args > (64u << 20))
		return -1;
	return 0;
}

/* old_stack_drop, on the new stack, lets go of the runner's frames: the
 * whole pages of the old stack below stack (the start-up data, argc up,
 * stays) are unmapped, and the rest of the page they end in zeroed. */
static void old_stack_drop(uintptr_t stack)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t low = stack & ~(page - 1);
	unsigned char present;
	explicit_bzero((void *)low, stack - low);
	/* Down to the end of the stack's mapping (mincore: ENOMEM). */
	for (int n = 0; n < 16384 && low >= page && mincore((void *)(low - page), page, &present) == 0; n++)
		low -= page;
	if (low < (stack & ~(page - 1)))
		munmap((void *)low, (stack & ~(page - 1)) - low);
}

/* scrub wipes the runner's secrets and the caller's strings from this
 * copy of the runner's memory; -1 if it could not, and the stage must not
 * go on. */
static int scrub(const struct run_plan *p, struct caller_area *a)
{
	static char *empty[] = {NULL};
	extern char **environ;
	if (p->net_config && p->net_config[0])
		explicit_bzero((char *)p->net_config, strlen(p->net_config));
	if (caller_area(a) < 0)
		return -1;
	explicit_bzero((void *)a->args, a->env_end - a->args);
	/* The command line "jail", as an exec left it: the kernel reads it
	 * to the first NUL when the area's last byte is not one (what
	 * setproctitle does), and the caller's length does not show. */
	if (a->args_end - a->args > 6) {
		memcpy((void *)a->args, "jail", 5);
		*(char *)(a->args_end - 1) = ' ';
	}
	environ = empty;
	return 0;
}

/* signals_reset leaves the stage the signals an exec would have: an empty
 * mask, no handler of the runner's, the ones it ignores (dfl) default; the
 * caller's own ignored ones stay so, for the command (nohup). */
static void signals_reset(const sigset_t *dfl)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa) < 0)
			continue;
		int handled = (sa.sa_flags & SA_SIGINFO) || (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
		if (handled || sigismember(dfl, sig))
			signal(sig, SIG_DFL);
	}
}

/* STAGE_STACK is the init stage's own stack, reserved, not committed: an
 * exec's default limit. */
#define STAGE_STACK (8u << 20)

/* on_new_stack runs the init stage on its own stack, the old one dropped;
 * makecontext passes ints, so the old stack's end comes in two halves. */
static void on_new_stack(int hi, int lo)
{
	old_stack_drop((uintptr_t)(((uint64_t)(uint32_t)hi << 32) | (uint32_t)lo));
	_exit(init_stage());
}

/* stack_switch moves onto a fresh stack (a guard page below it), where
 * nothing of the runner's frames is, and goes on in on_new_stack. */
static void stack_switch(uintptr_t old) __attribute__((noreturn));
static void stack_switch(uintptr_t old)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	ucontext_t uc;
	char *stk = mmap(NULL, STAGE_STACK + page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (stk == MAP_FAILED || mprotect(stk, page, PROT_NONE) < 0 || getcontext(&uc) < 0)
		_exit(125);
	uc.uc_stack = (stack_t){.ss_sp = stk + page, .ss_size = STAGE_STACK};
	uc.uc_link = NULL;
	makecontext(&uc, (void (*)(void))on_new_stack, 2, (int)(uint32_t)((uint64_t)old >> 32), (int)(uint32_t)old);
	setcontext(&uc);
	_exit(125);
}

/* stage_child is the fork's side: the stage's fds onto their numbers and
 * nothing else open, a session of its own, the runner's signals and
 * memory let go of, killed with the runner; then the init stage. */
static void stage_child(const int *high, int nfds, int out, const sigset_t *dfl, pid_t runner,
			const struct run_plan *p) __attribute__((noreturn));
static void stage_child(const int *high, int nfds, int out, const sigset_t *dfl, pid_t runner,
			const struct run_plan *p)
{
	/* Checked against the runner's pid after it is set, as it must be: a
	 * runner that died before would never send it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != runner)
		_exit(125);
	if (selfexec_fds(high, nfds, 3) < 0 || (out && selfexec_fds(high + nfds, 2, 1) < 0))
		_exit(125);
	if (close_fds_from(3 + nfds, NULL, 0) < 0)
		_exit(125);
	setsid();
	signals_reset(dfl);
	struct caller_area a;
	if (scrub(p, &a) < 0)
		_exit(125);
	stack_switch(a.stack);
}

pid_t stage_spawn(const int *fds, int nfds, const int *out, int cgroup_fd, const struct run_plan *p)
{
	/* Above every target number first, so no dup2 below clobbers one. */
	int src[FD_NFIXED + RUN_MAX_TREES + 2], high[FD_NFIXED + RUN_MAX_TREES + 2];
	int n = nfds + (out ? 2 : 0);
	for (int i = 0; i < nfds; i++)
		src[i] = fds[i];
	if (out)
		src[nfds] = out[0], src[nfds + 1] = out[1];
	if (fds_above(src, n, 3 + nfds, high) < 0)
		return -1;
	sigset_t dfl;
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGTTOU);
	pid_t runner = getpid(), pid;
	if (cgroup_fd >= 0) {
		/* v2: born in the run's cgroup, never a moment outside. */
		struct clone_args args = {.flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD, .cgroup = (uint64_t)cgroup_fd};
		pid = (pid_t)syscall(SYS_clone3, &args, sizeof args);
	} else {
		pid = fork();
	}
	if (pid == 0)
		stage_child(high, nfds, out != NULL, &dfl, runner, p);
	int err = errno;
	for (int i = 0; i < n; i++)
		close(high[i]);
	errno = err;
	return pid;
}
