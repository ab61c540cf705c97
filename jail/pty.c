/* The interactive mode, the runner's side: whether this run has a pty
 * (decided now, from the caller's fds: a cached plan serves a terminal
 * and a pipe alike), the caller's terminal in raw mode while the jail's
 * pty relays, and its modes given back on every way out (finish, a signal
 * that would end jail, ^Z). The pty itself is the jail's, from its own
 * devpts (ptyinside.c): the jail holds no fd of the caller's terminal,
 * and what the command does to its terminal (TIOCSTI aside, which the
 * filter refuses) stays in the jail. The runner runs it: C, before the Go
 * runtime, as the whole runner is (runner.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "internal/linux/fdpass.h"
#include "jail/pty.h"
#include "jail/runlimits.h"
#include "jail/runner.h"

/* The caller's terminal's modes when jail started, and whether jail has
 * it in raw mode now: process-wide, as the signal handlers that restore
 * them must reach them. */
static struct termios saved;
static volatile sig_atomic_t raw;

void tty_restore(void)
{
	if (raw) {
		raw = 0;
		tcsetattr(0, TCSANOW, &saved);
	}
}

/* foreground reports whether jail is its terminal's foreground job: a
 * job in the background keeps its hands off the terminal's modes. A
 * terminal that is not jail's controlling one (ENOTTY: a program gave jail
 * a pty's slave as stdin, with no session on it) has no jobs to respect. */
static int foreground(void)
{
	pid_t pg = tcgetpgrp(0);
	return pg == getpgrp() || (pg < 0 && errno == ENOTTY);
}

/* raw_enter puts the caller's terminal in raw mode: every byte typed goes
 * to the jail's pty as it is, whose own line discipline echoes, edits
 * lines and makes ^C a SIGINT; output goes out as the jail's pty made it
 * (its ONLCR already turned \n into \r\n). */
static void raw_enter(void)
{
	if (raw || !foreground())
		return;
	struct termios t = saved;
	cfmakeraw(&t);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	raw = 1;
	if (tcsetattr(0, TCSANOW, &t) < 0)
		raw = 0;
}

/* on_deadly restores the terminal before a signal ends jail the default
 * way (a crash, SIGXCPU, SIGPWR, ...): SIGKILL alone leaves it raw. The
 * signals jail passes on never end it (signals.c). */
static void on_deadly(int sig)
{
	tty_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void deadly_restore(void)
{
	static const int sigs[] = {SIGABRT, SIGBUS,    SIGFPE,  SIGILL,  SIGSEGV, SIGSYS,   SIGTRAP,
				   SIGXCPU, SIGXFSZ,   SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSTKFLT};
	struct sigaction sa = {.sa_handler = on_deadly, .sa_flags = SA_RESETHAND | SA_NODEFER};
	sigemptyset(&sa.sa_mask);
	struct sigaction old;
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		/* One the caller ignored stays ignored, for the command too. */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	/* And the real-time ones, whose default is to end the process. */
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		if (sigaction(sig, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sig, &sa, NULL);
}

void pty_choose(struct runner *r)
{
	uint32_t mode = r->plan->proc_flags & (PROC_TTY_ON | PROC_TTY_AUTO);
	if (!mode)
		return;
	int in = isatty(0), out = isatty(1);
	if (mode == PROC_TTY_AUTO && !(in && out && foreground()))
		return;
	/* Refused, not hung: a pty relayed to a pipe would wait for a
	 * terminal that never comes. */
	if (!in || !out)
		finish(r->plan, &r->o,
		       !in ? "--tty: jail's stdin is not a terminal (run it from one, or without --tty)"
			   : "--tty: jail's stdout is not a terminal (run it from one, or without --tty)");
	if (tcgetattr(0, &saved) < 0) {
		char msg[128];
		snprintf(msg, sizeof msg, "--tty: read the terminal's modes: %m");
		finish(r->plan, &r->o, msg);
	}
	r->pty.on = 1;
	deadly_restore();
}

/* winsize_get is the caller's terminal's size: stdin's, else stdout's. */
static int winsize_get(struct winsize *ws)
{
	return ioctl(0, TIOCGWINSZ, ws) == 0 || ioctl(1, TIOCGWINSZ, ws) == 0 ? 0 : -1;
}

const struct winsize *pty_size(const struct runner *r, struct winsize *ws)
{
	if (!r->pty.on)
		return NULL;
	if (winsize_get(ws) < 0)
		*ws = (struct winsize){0};
	return ws;
}

int pty_socket(struct runner *r, int *child)
{
	if (!r->pty.on) {
		*child = open("/dev/null", O_RDONLY | O_CLOEXEC);
		return *child < 0 ? -1 : 0;
	}
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -1;
	r->pty.sock = sp[0];
	*child = sp[1];
	return 0;
}

void pty_fds(const struct runner *r, struct pollfd *sock, struct pollfd *io)
{
	const struct pty *t = &r->pty;
	*sock = (struct pollfd){.fd = t->sock, .events = POLLIN};
	*io = (struct pollfd){.fd = -1};
	if (t->master < 0)
		return;
	if (t->off < t->len)
		*io = (struct pollfd){.fd = t->master, .events = POLLOUT};
	else if (t->in >= 0 && raw)
		*io = (struct pollfd){.fd = t->in, .events = POLLIN};
}

/* caller_in is stdin, opened again non-blocking for jail alone (a flag on
 * the caller's own description would be the shell's too), or stdin. */
static int caller_in(void)
{
	struct stat st, own;
	int fd = open("/proc/self/fd/0", O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 && fstat(0, &st) == 0 && fstat(fd, &own) == 0 && st.st_rdev == own.st_rdev)
		return fd;
	if (fd >= 0)
		close(fd);
	return 0;
}

void on_pty_master(struct runner *r, short revents)
{
	struct pty *t = &r->pty;
	char byte;
	int both[2], m, eof = recv(t->sock, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
	if (fd_recv(t->sock, both, 2) < 0)
		m = -1;
	else
		m = both[0], t->slave = both[1];
	close(t->sock);
	t->sock = -1;
	/* EOF: the jail failed before it had a pty, and says why. */
	if (m < 0) {
		if (!eof) {
			r->o.fatal = "could not take the pty from the jail (file descriptor limit?)";
			kill_jail(r);
		}
		return;
	}
	int out = fcntl(m, F_DUPFD_CLOEXEC, 3);
	if (out < 0 || fcntl(m, F_SETFL, O_NONBLOCK) < 0) {
		r->o.fatal = "could not relay the jail's pty (file descriptor limit?)";
		kill_jail(r);
		close(m);
		if (out >= 0)
			close(out);
		return;
	}
	t->master = m;
	t->in = caller_in();
	pty_resize(r);
	relay_open(&r->out[0], out, 1, "stdout", r->plan->max_output ? r->plan->max_output : UINT64_MAX);
	raw_enter();
}

void on_pty_io(struct runner *r, short revents)
{
	struct pty *t = &r->pty;
	if (t->off < t->len) {
		ssize_t w = write(t->master, t->buf + t->off, t->len - t->off);
		if (w > 0)
			t->off += (size_t)w;
		else if (w < 0 && errno != EAGAIN && errno != EINTR)
			t->off = t->len; /* the jail's side is gone: what is left goes nowhere */
		if (t->off == t->len)
			t->off = t->len = 0;
		return;
	}
	ssize_t n = read(t->in, t->buf, sizeof t->buf);
	if (n > 0) {
		t->len = (size_t)n;
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		/* The caller's terminal hung up: nothing more comes. */
		if (t->in > 0)
			close(t->in);
		t->in = -1;
	}
}

void pty_jail_over(struct runner *r)
{
	if (r->pty.slave >= 0)
		close(r->pty.slave);
	r->pty.slave = -1;
}

void pty_output_done(struct runner *r)
{
	struct pty *t = &r->pty;
	pty_jail_over(r);
	tty_restore();
	if (t->master >= 0)
		close(t->master);
	if (t->in > 0)
		close(t->in);
	t->master = t->in = -1;
	t->off = t->len = 0;
}

int pty_resize(struct runner *r)
{
	struct winsize ws;
	if (!r->pty.on)
		return 0;
	if (r->pty.master >= 0 && winsize_get(&ws) == 0)
		ioctl(r->pty.master, TIOCSWINSZ, &ws);
	return 1;
}

void pty_suspend(void) { tty_restore(); }

void pty_resume(struct runner *r)
{
	if (!r->pty.on || r->pty.master < 0)
		return;
	/* After a SIGSTOP, which jail cannot catch, raw is still set while
	 * the shell that took the terminal back made it cooked: set again. */
	raw = 0;
	raw_enter();
	pty_resize(r);
}
