/* The signals jail passes on to the command: PID 1's list (pid1_signals)
 * but SIGCHLD, blocked and read from a signalfd, then sent to PID 1 a byte
 * each on the plan pipe once the plan is sent: unlike kill(2), which the
 * kernel merges with one of the same number already pending (a jail that
 * keeps signalling its PID 1 would have jail's lost), bytes queue, and
 * nothing of the jail's can write there. The runner runs it: C, before
 * the Go runtime, as the whole runner is (runner.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "jail/signals.h"

void signals_hold(void)
{
	sigset_t usr;
	sigemptyset(&usr);
	sigaddset(&usr, SIGUSR1);
	sigaddset(&usr, SIGUSR2);
	sigprocmask(SIG_BLOCK, &usr, NULL);
}

void signals_block(sigset_t *fwd)
{
	pid1_signals(fwd);
	sigdelset(fwd, SIGCHLD);
	sigprocmask(SIG_BLOCK, fwd, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
}

int signals_open(struct runner *r, const sigset_t *fwd)
{
	/* Without it, signals would not reach the command: no jail rather
	 * than less of one. */
	r->sigfd = signalfd(-1, fwd, SFD_CLOEXEC);
	return r->sigfd < 0 ? jerr_set(&r->e, errno, "signalfd for forwarding signals") : 0;
}

/* stop_self is ^Z (SIGTSTP to jail): the SIGTSTP goes on to the command's
 * process group first (on the plan pipe, now, when the plan is sent), and
 * after a moment for its handlers (a full-screen program restores the
 * terminal), the jail is frozen (cgroup v2) and jail stops, as a job does:
 * its caller (a shell) takes the terminal back. The SIGTSTP is delivered
 * to jail itself, so the kernel decides as for any job (no stop in an
 * orphaned process group, where nothing would continue it); once jail runs
 * again the jail is thawed. PID 1, seeing jail stopped, stops the jail too
 * (with SIGSTOP where there is no freezer); the time limit is wall time,
 * stopped time included. In tty mode the caller's terminal has its own
 * modes back while jail is stopped, and raw mode again once jail runs in
 * its foreground (pty.c). */
static void stop_self(struct runner *r)
{
	if (r->fwd_sent == r->fwd_sendable && r->nsigq && write(r->plan_out, r->sigq, r->nsigq) == (ssize_t)r->nsigq)
		r->nsigq = 0;
	struct timespec moment = {0, 20000000};
	nanosleep(&moment, NULL);
	/* Continued meanwhile: no stop (the stop would discard the pending
	 * SIGCONT, and nothing would continue jail). */
	sigset_t pending;
	if (sigpending(&pending) == 0 && sigismember(&pending, SIGCONT))
		return;
	ssize_t w = r->cg.freeze >= 0 ? write(r->cg.freeze, "1", 1) : 0;
	(void)w;
	sigset_t tstp;
	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	pty_suspend();
	raise(SIGTSTP);
	sigprocmask(SIG_UNBLOCK, &tstp, NULL);
	sigprocmask(SIG_BLOCK, &tstp, NULL);
	cg_thaw(&r->cg);
	pty_resume(r);
}

void on_signal(struct runner *r, short revents)
{
	struct signalfd_siginfo si;
	if (read(r->sigfd, &si, sizeof si) != sizeof si)
		return;
	int sig = (int)si.ssi_signo;
	if (sig == SIGCONT) {
		cg_thaw(&r->cg);
		pty_resume(r);
	}
	/* With a pty, a resize is the pty's: the kernel tells the jail's
	 * foreground process group. */
	if (sig == SIGWINCH && pty_resize(r))
		return;
	/* A stop or continue before the jail has a command has nothing to
	 * stop or continue. */
	int early = !r->pid1 && (sig == SIGTSTP || sig == SIGCONT);
	if (!early && r->nsigq < sizeof r->sigq)
		r->sigq[r->nsigq++] = (unsigned char)sig;
	if (sig == SIGTSTP)
		stop_self(r);
}

void signals_flush(struct runner *r)
{
	ssize_t n = write(r->plan_out, r->sigq, r->nsigq);
	if (n > 0 || errno != EAGAIN) {
		size_t done = n > 0 ? (size_t)n : r->nsigq;
		memmove(r->sigq, r->sigq + done, r->nsigq - done);
		r->nsigq -= done;
	}
}
