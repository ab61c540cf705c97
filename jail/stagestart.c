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
 *  - the buffers the plan came in (the cache entry with its key: HOME,
 *    the profile path; Go's hand-over with the status path) and jail-sh's
 *    rewritten argv: zeroed (run_plan.wipe).
 * What is left of the runner's is its own bookkeeping, the plan the stage
 * is sent anyway, and glibc's start-up copies of its own variables
 * (GLIBC_TUNABLES, LD_LIBRARY_PATH), which cannot be told apart to zero.
 * It also shares the runner's randomness (the stack canary, the pointer
 * guard, the address layout), which an exec renewed: a leak of PID 1's
 * memory would tell those of the runner's. PID 1 is made non-dumpable
 * before anything of the jail runs (init.c), as before, and the command
 * cannot ptrace it or read its memory.
 *
 * C, before the Go runtime, as the whole runner is (runner.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "internal/linux/file.h"
#include "internal/wire/err.h"
#include "jail/keyring.h"
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
	if (file_get("/proc/self/stat", buf, sizeof buf) <= 0)
		return -1;
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

/* stage_die reports why the fork cannot become the init stage on its
 * error pipe (in place by then), for the runner's line, and exits. */
static void stage_die(const char *what) __attribute__((noreturn));
static void stage_die(const char *what)
{
	struct jerr e = {0};
	jerr_set(&e, errno, "init stage: %s", what);
	stage_error(&e);
	_exit(125);
}

/* stack_mapping finds the [stack] mapping in /proc/self/maps: [lo, hi). */
static int stack_mapping(uintptr_t *lo, uintptr_t *hi)
{
	char buf[16384];
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t r;
	if (fd < 0)
		return -1;
	while (n < sizeof buf - 1 && ((r = read(fd, buf + n, sizeof buf - 1 - n)) > 0 || (r < 0 && errno == EINTR)))
		n += r > 0 ? (size_t)r : 0;
	close(fd);
	buf[n] = 0;
	for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char *end = strchr(line, '\n');
		if (end)
			*end = 0;
		size_t len = strlen(line);
		if (len > 7 && strcmp(line + len - 7, "[stack]") == 0) {
			unsigned long long l, h;
			if (sscanf(line, "%llx-%llx", &l, &h) != 2)
				return -1;
			*lo = (uintptr_t)l, *hi = (uintptr_t)h;
			return 0;
		}
		if (end)
			*end = '\n';
	}
	errno = ENOENT;
	return -1;
}

/* old_stack_drop, on the new stack, lets go of the runner's frames: the
 * whole pages of the old stack's mapping below stack (the start-up data,
 * argc up, stays) are unmapped, and the rest of the page they end in
 * zeroed. It fails the stage rather than go on with them. */
static void old_stack_drop(uintptr_t stack)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), base = stack & ~(page - 1);
	uintptr_t lo, hi;
	if (stack_mapping(&lo, &hi) < 0 || stack < lo || stack >= hi)
		stage_die("find the runner's stack");
	explicit_bzero((void *)base, stack - base);
	if (lo < base && munmap((void *)lo, base - lo) < 0)
		stage_die("unmap the runner's stack");
}

/* wipe zeroes [b, b+n) in this copy of the runner's memory: the whole
 * pages inside by dropping them (MADV_DONTNEED: this process's copy
 * reads zero from then on, and no page is copied as a write would), the
 * ends by writing. The runner's own pages are untouched. */
static void wipe(void *b, size_t n)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)b, hi = lo + n, in_lo = (lo + page - 1) & ~(page - 1), in_hi = hi & ~(page - 1);
	if (in_lo >= in_hi || madvise((void *)in_lo, in_hi - in_lo, MADV_DONTNEED) < 0) {
		explicit_bzero(b, n);
		return;
	}
	explicit_bzero(b, in_lo - lo);
	explicit_bzero((void *)in_hi, hi - in_hi);
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
	for (size_t i = 0; i < sizeof p->wipe / sizeof p->wipe[0]; i++)
		if (p->wipe[i])
			wipe(p->wipe[i], malloc_usable_size(p->wipe[i]));
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
		stage_die("map a stack of its own");
	uc.uc_stack = (stack_t){.ss_sp = stk + page, .ss_size = STAGE_STACK};
	uc.uc_link = NULL;
	makecontext(&uc, (void (*)(void))on_new_stack, 2, (int)(uint32_t)((uint64_t)old >> 32), (int)(uint32_t)old);
	setcontext(&uc);
	stage_die("move to its own stack");
}

/* stage_child is the fork's side: the stage's fds onto their numbers and
 * nothing else open, a session of its own, the runner's signals and
 * memory let go of, killed with the runner; then the init stage. */
static void stage_child(const int *high, int nfds, int std, const sigset_t *dfl, pid_t runner,
			const struct run_plan *p) __attribute__((noreturn));
static void stage_child(const int *high, int nfds, int std, const sigset_t *dfl, pid_t runner,
			const struct run_plan *p)
{
	/* Checked against the runner's pid after it is set, as it must be: a
	 * runner that died before would never send it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != runner)
		_exit(125);
	if (selfexec_fds(high, nfds, 3) < 0 || (std && selfexec_fds(high + nfds, 3, 0) < 0))
		_exit(125); /* no error pipe yet: the runner says the stage died */
	if (close_fds_from(3 + nfds, NULL, 0) < 0)
		stage_die("close the runner's file descriptors");
	/* Before the jail may be left in the caller's session keyring: as
	 * the caller, in its user namespace (keyring.c). */
	struct jerr e = {0};
	if ((p->proc_flags & PROC_KEYRING_BEST_EFFORT) && keyring_filtered() && keyring_caller_bare(&e) < 0) {
		stage_error(&e);
		_exit(125);
	}
	setsid();
	signals_reset(dfl);
	struct caller_area a;
	if (scrub(p, &a) < 0)
		stage_die("find the caller's command line and environment in /proc/self/stat");
	stack_switch(a.stack);
}

pid_t stage_spawn(const int *fds, int nfds, const int *std, int cgroup_fd, const struct run_plan *p)
{
	/* Above every target number first, so no dup2 below clobbers one. */
	int src[FD_NFIXED + RUN_MAX_TREES + 3], high[FD_NFIXED + RUN_MAX_TREES + 3];
	int n = nfds + (std ? 3 : 0);
	for (int i = 0; i < nfds; i++)
		src[i] = fds[i];
	for (int i = 0; std && i < 3; i++)
		src[nfds + i] = std[i];
	if (fds_above(src, n, 3 + nfds, high) < 0)
		return -1;
	sigset_t dfl;
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGTTOU);
	pid_t runner = getpid(), pid;
	if (cgroup_fd >= 0) {
		/* v2: born in the run's cgroup, never a moment outside. A raw
		 * clone3 skips glibc's fork bookkeeping (its cached thread id,
		 * the robust futex list, malloc's locks): sound because the
		 * runner has one thread, and nothing of the stage's uses the
		 * thread id (PID 1 was always a raw clone). */
		struct clone_args args = {.flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD, .cgroup = (uint64_t)cgroup_fd};
		pid = (pid_t)syscall(SYS_clone3, &args, sizeof args);
	} else {
		pid = fork();
	}
	if (pid == 0)
		stage_child(high, nfds, std != NULL, &dfl, runner, p);
	int err = errno;
	for (int i = 0; i < n; i++)
		close(high[i]);
	errno = err;
	return pid;
}
