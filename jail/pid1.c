/* The jail's PID 1 once the command runs: reap every orphan, pass the
 * caller's signals on to the command, keep the whole jail stopped while jail
 * is, and when the command is gone report its status and exit. PID 1
 * exiting ends the pid namespace, so the kernel kills everything the command
 * left behind. C, as the whole init stage is (stage.h says why). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail/stage.h"

/* How often PID 1 looks whether jail is stopped: SIGSTOP cannot be caught,
 * so nothing tells it. */
#define WATCH_NS 100000000

/* How many children PID 1 reaps before it looks at jail again. */
#define REAP_BATCH 64

void pid1_signals(sigset_t *set)
{
	static const int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP,  SIGQUIT,
				   SIGUSR1, SIGUSR2, SIGWINCH, SIGTSTP, SIGCONT};
	sigemptyset(set);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaddset(set, sigs[i]);
}

/* drop_all leaves PID 1 with no capabilities: it only waits and signals its
 * own children, which needs none. */
static void drop_all(void)
{
	for (int cap = 0; cap <= 63; cap++)
		prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {{0}};
	syscall(SYS_capset, &hdr, data);
}

/* written is what PID 1 and every process it reaped wrote to disk-backed
 * files: the kernel's write_bytes, which rusage counts in 512-byte blocks
 * (its own, and its reaped children's with theirs); 0 when it does not
 * count (no disk limit). PID 1 cannot read its own /proc/PID/io: never
 * exec'd and not dumpable, it belongs to the host's root there. */
static uint64_t written(int count)
{
	struct rusage self, children;
	if (!count || getrusage(RUSAGE_SELF, &self) < 0 || getrusage(RUSAGE_CHILDREN, &children) < 0)
		return 0;
	return ((uint64_t)self.ru_oublock + (uint64_t)children.ru_oublock) * 512;
}

/* report_written tells the runner PID 1's count when it changed; never
 * blocking PID 1 (FD_STATUS is non-blocking until finish): a count the
 * pipe has no room for goes with the next. */
static void report_written(int count, uint64_t *last)
{
	uint64_t now = written(count);
	if (!count || now == *last)
		return;
	struct status_record st = {.magic = WRITTEN_MAGIC, .written = now};
	if (write(FD_STATUS, &st, sizeof st) == sizeof st)
		*last = now;
}

static void finish(int wstatus, int count) __attribute__((noreturn));

static void finish(int wstatus, int count)
{
	struct status_record st = {.magic = STATUS_MAGIC, .written = written(count)};
	int fl = fcntl(FD_STATUS, F_GETFL);
	if (fl >= 0)
		fcntl(FD_STATUS, F_SETFL, fl & ~O_NONBLOCK);
	if (WIFEXITED(wstatus)) {
		st.exited = 1;
		st.code = WEXITSTATUS(wstatus);
	} else {
		st.code = WTERMSIG(wstatus);
	}
	ssize_t w = write(FD_STATUS, &st, sizeof st);
	(void)w;
	_exit(0);
}

/* forward passes a signal jail received on. What a terminal sends its
 * foreground job (^C, ^\, ^Z, a resize) goes to the command's whole
 * process group, as it would without jail: a shell running a loop of
 * sleeps stops at ^C. The rest (kill(1)'s TERM, HUP, USR1, USR2) goes to
 * the command alone. The command leads its group (exec.c). */
static void forward(pid_t command, int sig)
{
	int group = sig == SIGINT || sig == SIGQUIT || sig == SIGTSTP || sig == SIGWINCH || sig == SIGCONT;
	if (!group || kill(-command, sig) < 0)
		kill(command, sig);
}

/* freezer reports whether FD_FREEZE is the run's cgroup.freeze (cgroup
 * v2), else closes it: then the jail is stopped with SIGSTOP, which a
 * process of the jail can undo by having the kernel send it SIGCONT (a
 * timer, say), where a frozen one cannot be continued by anything but a
 * thaw. */
static int freezer(void)
{
	struct statfs sf;
	if (fstatfs(FD_FREEZE, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
		return 1;
	close(FD_FREEZE);
	return 0;
}

/* stop_jail stops every process of the jail: with the freezer, PID 1
 * itself too, until jail, continued, thaws it; else with SIGSTOP, sent
 * again at each look while jail stays stopped. */
static int stop_jail(int frozen)
{
	if (frozen)
		return write(FD_FREEZE, "1", 1) == 1;
	return kill(-1, SIGSTOP) == 0;
}

/* runner_stopped reports whether jail's runner is stopped (state T in its
 * /proc/PID/stat; t, a tracer's stop, is not the caller's doing); -1 when
 * it cannot tell. */
static int runner_stopped(void)
{
	char buf[512];
	ssize_t n = pread(FD_WATCH, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* the name may hold anything */
	return p && p[1] == ' ' ? p[2] == 'T' : -1;
}

/* passed_on forwards the signals jail sent on the plan pipe, a byte each
 * (runner.c); 0 once jail is gone (EOF: the jail goes with it). */
static int passed_on(pid_t command, int *stopped, int freeze, int watch, const struct itimerspec *every)
{
	unsigned char sigs[64];
	sigset_t passed;
	pid1_signals(&passed);
	ssize_t n = read(FD_PLAN, sigs, sizeof sigs);
	if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
		return 0;
	for (ssize_t i = 0; i < n; i++) {
		int sig = sigs[i];
		if (sig < 1 || sig > 31 || !sigismember(&passed, sig))
			continue;
		/* Continued: the whole jail too, once jail itself runs again
		 * (its state says so; frozen, jail thawed it). */
		if (sig == SIGCONT && *stopped && runner_stopped() == 0)
			*stopped = !freeze && kill(-1, SIGCONT) < 0;
		forward(command, sig);
		/* ^Z: jail stops itself next; look again soon, once the
		 * command's own TSTP handler has had its moment. */
		if (sig == SIGTSTP) {
			struct itimerspec soon = {.it_interval = every->it_interval, .it_value = {0, WATCH_NS / 5}};
			timerfd_settime(watch, 0, &soon, NULL);
		}
	}
	return 1;
}

void pid1_run(pid_t command, int count)
{
	uint64_t reported = 0;
	if (count) {
		int fl = fcntl(FD_STATUS, F_GETFL);
		if (fl < 0 || fcntl(FD_STATUS, F_SETFL, fl | O_NONBLOCK) < 0)
			_exit(125);
	}
	drop_all();
	/* SIGCHLD only: the signals jail passes on come as bytes on the plan
	 * pipe; a signal sent to PID 1 from inside the jail, which has no
	 * handler, the kernel drops (a pid namespace's init). */
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		_exit(125);
	/* jail stopped (^Z, SIGSTOP) stops the jail: every process in it,
	 * daemons too, is stopped while jail is, and continued with it. */
	int watch = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec every = {.it_interval = {0, WATCH_NS}, .it_value = {0, WATCH_NS}};
	if (watch < 0 || timerfd_settime(watch, 0, &every, NULL) < 0)
		_exit(125);
	int stopped = 0, freeze = freezer(), more = 0;
	struct pollfd fds[3] = {
		{.fd = sfd, .events = POLLIN}, {.fd = FD_PLAN, .events = POLLIN}, {.fd = watch, .events = POLLIN}};
	for (;;) {
		if (poll(fds, 3, more ? 0 : -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(125);
		}
		/* jail holds the plan pipe open while it lives: at its EOF jail
		 * is gone, and so is the jail. */
		if (fds[1].revents && !passed_on(command, &stopped, freeze, watch, &every))
			_exit(125);
		if (fds[2].revents) {
			uint64_t ticks;
			if (read(watch, &ticks, sizeof ticks) < 0)
				ticks = 0;
			/* Stopped again at every look while jail is: the freeze
			 * is idempotent, and a stop by signals may have been
			 * undone, or jail thawed and stopped again meanwhile. */
			int now = runner_stopped();
			if (now == 1)
				stopped = stop_jail(freeze);
			else if (now == 0 && stopped)
				stopped = !freeze && kill(-1, SIGCONT) < 0;
		}
		struct signalfd_siginfo si;
		if (fds[0].revents && read(sfd, &si, sizeof si) != sizeof si)
			continue;
		if (!fds[0].revents && !more)
			continue;
		/* A batch at a time, then back to poll: a jail making orphans
		 * that exit as fast as it can must not keep PID 1 reaping, deaf
		 * to jail and blind to its stop. */
		int ws, n = 0;
		pid_t pid = 0;
		while (n < REAP_BATCH && (pid = waitpid(-1, &ws, WNOHANG)) > 0) {
			if (pid == command)
				finish(ws, count);
			n++;
		}
		if (n)
			report_written(count, &reported);
		more = n == REAP_BATCH;
	}
}
