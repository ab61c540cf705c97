/* The runner: jail's own process once a run is planned. It makes the run's
 * cgroup, starts the init stage, gives its user namespace the id maps,
 * forwards it the plan, then waits in one loop that hands each ready fd to
 * its concern's on_* handler (signals.c, runlimits.c, relay.c, proxyctl.c,
 * and the init stage's pipes here), and reports at its single exit point
 * (report.c's finish): exit status, one line on stderr, the status record.
 * It is C that runs before the Go runtime, so a run replayed from the plan
 * cache never starts Go. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal/linux/fdpass.h"
#include "jail/callerfd.h"
#include "jail/diskwatch.h"
#include "jail/runlimits.h"
#include "jail/runner.h"
#include "jail/signals.h"
#include "jail/stagestart.h"
#include "jail/userns.h"
#include "seccomp/sc.h"

static void fail(struct runner *r) __attribute__((noreturn));
static void fail_stage(struct runner *r) __attribute__((noreturn));
static void runner_end(struct runner *r) __attribute__((noreturn));

/* fail ends a run whose jail was never started: r->e says why. */
static void fail(struct runner *r) { finish(r->plan, &r->o, r->e.msg); }

static void reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* fail_stage ends a run whose init stage runs: it is killed first. */
static void fail_stage(struct runner *r)
{
	kill(r->stage, SIGKILL);
	reap(r->stage);
	fail(r);
}

/* runner_open readies what the run reports to, before anything runs:
 * where the record goes, and the audit log. Either failing ends the run
 * with a line and 125, and no record. */
static void runner_open(struct runner *r, char **argv, const char *status_to)
{
	/* Fds 0-2 open, so nothing of jail's own (the status record, a
	 * relay pipe) takes one of their numbers and gets the command's
	 * output. */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int null = open("/dev/null", O_RDWR);
			if (null >= 0 && null != fd) {
				dup2(null, fd);
				close(null);
			}
		}
	r->o.status_fd = status_open(status_to, &r->e);
	if (r->o.status_fd == -2) {
		dprintf(2, "jail: %s\n", r->e.msg);
		_exit(125);
	}
	r->o.argv = argv;
	r->o.status_to = status_to;
	/* A replayed plan is keyed on jail's own arguments: the command is
	 * checked here, as the Go side checks it. */
	if (!argv[0] || !argv[0][0])
		finish(r->plan, &r->o, "empty command: the program to run after -- is \"\"");
	if (r->plan->audit_path[0] && (r->o.audit_fd = audit_open(r->plan->audit_path, &r->e)) < 0) {
		dprintf(2, "jail: %s\n", r->e.msg);
		_exit(125);
	}
	if (disk_open(&r->disk, r->plan, &r->e) < 0)
		fail(r);
}

/* runner_pipes makes what the init stage gets (stage.h's fds, the mount
 * trees, the output relay's pipes) and what goes on its plan pipe. */
static void runner_pipes(struct runner *r, char **argv)
{
	extern char **environ;
	const struct run_plan *p = r->plan;
	int pl[2], er[2], st[2], sy[2], nt[2], ne[2];
	if (pipe2(pl, O_CLOEXEC) || pipe2(er, O_CLOEXEC) || pipe2(st, O_CLOEXEC) || pipe2(sy, O_CLOEXEC) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, nt) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ne) || pty_socket(r, &r->child[FD_TTY - 3])) {
		jerr_set(&r->e, errno, "pipe");
		fail(r);
	}
	r->plan_out = pl[1], r->error_in = er[0], r->status_in = st[0], r->sync_in = sy[0];
	r->notify_sock = nt[0], r->px.net = ne[0];
	int *c = r->child;
	c[FD_PLAN - 3] = pl[0], c[FD_ERR - 3] = er[1], c[FD_STATUS - 3] = st[1], c[FD_SYNC - 3] = sy[1];
	c[FD_NOTIFY - 3] = nt[1], c[FD_NET - 3] = ne[1];
	/* The runner's own stat, for PID 1 to see it stopped (SIGSTOP cannot
	 * be caught: jail cannot tell the jail itself). */
	if ((c[FD_WATCH - 3] = open("/proc/self/stat", O_RDONLY | O_CLOEXEC)) < 0) {
		jerr_set(&r->e, errno, "open /proc/self/stat");
		fail(r);
	}
	if (p->sc_flags & SC_NOTIFY) {
		struct wire answers = p->sc_answers;
		if (!(r->o.denied = sc_report_new(&answers, p->sc_flags, &r->e)))
			fail(r);
	}
	if ((p->flags & RUN_ROOT) && userns_clone_trees(p, c + FD_NFIXED, &r->e) < 0)
		fail(r);
	mode_t um = umask(022);
	umask(um);
	struct winsize ws;
	if (forward_encode(p, argv, environ, (uint32_t)um, pty_size(r, &ws), &r->fwd, &r->fwd_len, &r->e) < 0)
		fail(r);
	/* The output relay's pipes, when there is a cap (in tty mode the
	 * pty's master is relayed instead). */
	for (int i = 0; p->max_output && !r->pty.on && i < 2; i++) {
		int pp[2];
		if (pipe2(pp, O_CLOEXEC) < 0) {
			jerr_set(&r->e, errno, "pipe for the output relay");
			fail(r);
		}
		relay_open(&r->out[i], pp[0], 1 + i, i ? "stderr" : "stdout", p->max_output);
		r->out_pipe[i] = pp[1];
	}
}

/* runner_spawn makes the run's cgroup, limited, and starts the init stage.
 * On v2 the cgroup comes before anything of the jail exists: the init
 * stage starts inside it. On v1 while the init stage starts and makes its
 * user namespace, which takes longer: it is moved in before it starts
 * anything (runner_send). */
static void runner_spawn(struct runner *r)
{
	const struct run_plan *p = r->plan;
	int v2 = (p->cg.flags & CG_ON) && (p->cg.flags & CG_V2);
	if (v2 && cg_create(&p->cg, &r->cg, &r->e) < 0)
		fail(r);
	r->o.cgr = &r->cg;
	/* What PID 1 freezes the jail with while jail is stopped (v2); on v1
	 * it has only signals, and gets /dev/null. */
	int *freeze = &r->child[FD_FREEZE - 3];
	*freeze = r->cg.freeze >= 0 ? fcntl(r->cg.freeze, F_DUPFD_CLOEXEC, 3) : open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (*freeze < 0) {
		jerr_set(&r->e, errno, "the freezer for PID 1");
		fail(r);
	}
	int nfds = FD_NFIXED + (int)p->ntrees;
	/* In tty mode the jail gets no fd of the caller's terminal: its
	 * stdio are /dev/null until the command's are the pty. */
	int null = r->pty.on ? open("/dev/null", O_RDWR | O_CLOEXEC) : -1;
	const int relayed[3] = {0, r->out_pipe[0], r->out_pipe[1]}, none[3] = {null, null, null};
	if (r->pty.on && null < 0) {
		jerr_set(&r->e, errno, "open /dev/null");
		fail(r);
	}
	r->stage = stage_spawn(r->child, nfds, r->pty.on ? none : p->max_output ? relayed : NULL, r->cg.dir_fd, p);
	if (null >= 0)
		close(null);
	if (r->stage < 0) {
		jerr_set(&r->e, errno, "start the init stage");
		fail(r);
	}
	if ((p->cg.flags & CG_ON) && !v2 && cg_create(&p->cg, &r->cg, &r->e) < 0)
		fail_stage(r);
	for (int i = 0; i < nfds; i++)
		close(r->child[i]);
	for (int i = 0; i < 2; i++)
		if (r->out_pipe[i] >= 0)
			close(r->out_pipe[i]);
}

/* runner_map writes the id maps once the init stage says 'U': its user
 * namespace exists. An init stage that died first says why on its error
 * pipe. */
static void runner_map(struct runner *r)
{
	char u = 0;
	ssize_t n;
	while ((n = read(r->sync_in, &u, 1)) < 0 && errno == EINTR)
		;
	if (n == 1 && u == 'U' && userns_write_maps(r->stage, r->plan, &r->e) == 0)
		return;
	if (n != 1 || u != 'U') {
		close(r->plan_out);
		n = read(r->error_in, r->o.err, sizeof r->o.err - 1);
		r->o.err[n > 0 ? n : 0] = 0;
		r->o.err[strcspn(r->o.err, "\n")] = 0;
		if (!r->o.err[0])
			jerr_set(&r->e, 0, "the init stage died before it could create the user namespace");
	}
	kill(r->stage, SIGKILL);
	reap(r->stage);
	finish(r->plan, &r->o, r->e.msg[0] ? r->e.msg : r->o.err[0] == JERR_SETUP ? r->o.err + 1 : NULL);
}

/* runner_send starts the plan on its way, and on v1 has the jail join its
 * cgroup: the init stage, before it starts PID 1, so everything of the
 * jail is born inside. Joining waits for an RCU grace period; the plan goes
 * out first, so the init stage builds its namespaces meanwhile, and waits
 * for the plan's last byte only before it starts PID 1. */
static void runner_send(struct runner *r)
{
	fcntl(r->plan_out, F_SETFL, O_NONBLOCK);
	/* All of it but the last byte fits the pipe, or the init stage would
	 * wait for the rest until the attach is done, and the grace period
	 * would be on the run's critical path: a plan (its seccomp program,
	 * mounts and answers) is often more than a pipe's default 64 KiB.
	 * Past the host's pipe-max-size it goes as it can. */
	if (r->fwd_len > 65536)
		fcntl(r->plan_out, F_SETPIPE_SZ, (int)(r->fwd_len < INT_MAX ? r->fwd_len : INT_MAX));
	r->fwd_sendable = r->fwd_len - 1;
	ssize_t n = write(r->plan_out, r->fwd, r->fwd_sendable);
	if (n > 0)
		r->fwd_sent = (size_t)n;
	if (r->cg.n && cg_attach(&r->cg, r->stage, &r->e) < 0)
		fail_stage(r);
	r->fwd_sendable = r->fwd_len;
}

/* runner_watch readies what the loop waits on beyond the init stage's
 * pipes: the seccomp listener's socket, the proxy's, the freezer's
 * events, the limits and the signals. */
static void runner_watch(struct runner *r, const sigset_t *fwd)
{
	if (!(r->plan->sc_flags & SC_NOTIFY)) {
		close(r->notify_sock);
		r->notify_sock = -1;
	}
	/* What PID 1 hands over: nothing when the jail has the host's
	 * network, the resolver's sockets, and for the allowlist the rest. */
	if (strcmp(r->plan->net_mode, "host") == 0) {
		close(r->px.net);
		r->px.net = -1;
	}
	if (limits_arm(r) < 0 || disk_arm(&r->disk, r->plan, &r->e) < 0 || signals_open(r, fwd) < 0)
		fail_stage(r);
}

/* on_plan sends more of the plan, or, once it is out, the signals queued
 * for PID 1. */
static void on_plan(struct runner *r, short revents)
{
	if (r->fwd_sent == r->fwd_sendable) {
		signals_flush(r);
		return;
	}
	ssize_t n = write(r->plan_out, r->fwd + r->fwd_sent, r->fwd_sendable - r->fwd_sent);
	if (n > 0)
		r->fwd_sent += (size_t)n;
	else if (errno != EAGAIN)
		r->fwd_sent = r->fwd_sendable; /* the init stage is gone; it says why on its error pipe */
}

/* on_sync reads PID 1's pid, which the init stage sends as its last word. */
static void on_sync(struct runner *r, short revents)
{
	ssize_t n = read(r->sync_in, r->pidbuf + r->pidlen, sizeof r->pidbuf - r->pidlen);
	if (n > 0 && (r->pidlen += (size_t)n) == sizeof r->pidbuf) {
		uint32_t v;
		memcpy(&v, r->pidbuf, sizeof v);
		r->pid1 = (pid_t)v;
		if (r->o.timed_out)
			kill(r->pid1, SIGKILL);
	}
	if (n <= 0 || r->pid1) {
		close(r->sync_in);
		r->sync_in = -1;
		reap(r->stage);
		r->stage_gone = 1;
	}
}

/* notes_take says and records each whole note at the start of the error
 * pipe's bytes (err.h's JERR_NOTE_*: what the run went without, as its
 * profile allows), before any error line. */
static void notes_take(struct runner *r)
{
	char *nl;
	while (r->errlen && r->o.err[0] == JERR_NOTE_KEYRING && (nl = memchr(r->o.err, '\n', r->errlen))) {
		*nl = 0;
		say(r->o.err + 1);
		r->o.keyring_inherited = 1;
		size_t used = (size_t)(nl + 1 - r->o.err);
		memmove(r->o.err, nl + 1, r->errlen - used);
		r->errlen -= used;
	}
}

/* on_error reads the error pipe: notes, then the error line; its EOF is
 * the end of setup (the command exec'd, or the jail failed). */
static void on_error(struct runner *r, short revents)
{
	ssize_t n = read(r->error_in, r->o.err + r->errlen, sizeof r->o.err - 1 - r->errlen);
	if (n > 0) {
		r->errlen += (size_t)n;
		notes_take(r);
		return;
	}
	r->o.err[r->errlen] = 0;
	r->o.err[strcspn(r->o.err, "\n")] = 0;
	r->o.setup_ns = monotonic_ns() - r->started;
	close(r->error_in);
	r->error_in = -1;
}

/* on_status reads PID 1's status record of the command. */
static void on_status(struct runner *r, short revents)
{
	struct status_record rec;
	ssize_t n = read(r->status_in, &rec, sizeof rec);
	if (n == sizeof rec && (rec.magic == STATUS_MAGIC || rec.magic == WRITTEN_MAGIC) && rec.written > r->disk.pid1_written)
		r->disk.pid1_written = rec.written;
	if (n == sizeof rec && rec.magic == STATUS_MAGIC) {
		r->o.have_status = 1;
		r->o.exited = rec.exited;
		r->o.code = rec.code;
	} else if (n <= 0) {
		close(r->status_in);
		r->status_in = -1;
	}
}

/* on_notify takes the seccomp listener: the command's process loaded the
 * filter. Without it the refused calls would go unanswered (or, the filter
 * losing its listener, fail ENOSYS unreported): the jail ends. One that
 * died before loading sends nothing, and says why on the error pipe. */
static void on_notify(struct runner *r, short revents)
{
	char byte;
	int eof = recv(r->notify_sock, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
	if (fd_recv(r->notify_sock, &r->listener, 1) < 0)
		r->listener = -1;
	close(r->notify_sock);
	r->notify_sock = -1;
	if (r->listener < 0 && !eof) {
		r->o.fatal = "could not take the seccomp listener from the init stage (file descriptor limit?)";
		kill_jail(r);
	}
}

/* on_listener answers a handed call; or, hung up, the jail is gone. */
static void on_listener(struct runner *r, short revents)
{
	if (!(revents & POLLIN) || sc_handle(r->o.denied, r->listener) < 0) {
		close(r->listener);
		r->listener = -1;
	}
}

/* on_frozen thaws the jail frozen while jail runs (PID 1 froze it just as
 * jail was continued); see cg_thaw. */
static void on_frozen(struct runner *r, short revents) { cg_thaw(&r->cg); }

static void on_output(struct runner *r, int i)
{
	relay_step(&r->out[i]);
	if (r->pty.on && r->out[i].in < 0 && r->pty.master >= 0)
		pty_output_done(r);
}
/* The caller's end is gone: in tty mode its terminal went away, and the
 * jail's pty hangs up as a closed terminal window's does (SIGHUP, then
 * EIO), not left to a command that ignores SIGHUP and writes on. */
static void on_gone(struct runner *r, int i, short revents)
{
	if (!(revents & (POLLERR | POLLHUP)))
		return;
	relay_broken(&r->out[i]);
	if (r->pty.on && r->pty.master >= 0)
		pty_output_done(r);
}
static void on_stdout(struct runner *r, short revents) { on_output(r, 0); }
static void on_stderr(struct runner *r, short revents) { on_output(r, 1); }
static void on_stdout_gone(struct runner *r, short revents) { on_gone(r, 0, revents); }
static void on_stderr_gone(struct runner *r, short revents) { on_gone(r, 1, revents); }

/* What the loop waits on, one slot each, handled in this order. */
enum slot { S_PLAN, S_SYNC, S_ERROR, S_PTY, S_STATUS, S_SIGNAL, S_NOTIFY, S_LISTENER, S_PIDS, S_GONE1, S_OUT1,
	    S_GONE2, S_OUT2, S_TYPED, S_NET, S_PX, S_PROXY = S_PX + NET_NFDS, S_FROZEN, S_TIMER, S_DISK, S_N };

static void (*const handlers[S_N])(struct runner *r, short revents) = {
	[S_PLAN] = on_plan,           [S_SYNC] = on_sync,           [S_ERROR] = on_error,
	[S_STATUS] = on_status,       [S_SIGNAL] = on_signal,       [S_NOTIFY] = on_notify,
	[S_LISTENER] = on_listener,   [S_PIDS] = on_pids,           [S_GONE1] = on_stdout_gone,
	[S_OUT1] = on_stdout,         [S_GONE2] = on_stderr_gone,   [S_OUT2] = on_stderr,
	[S_NET] = on_proxy_listeners, [S_PX ... S_PROXY - 1] = on_proxy_connect,
	[S_PROXY] = on_proxy_report,  [S_FROZEN] = on_frozen,       [S_TIMER] = on_timer,
	[S_PTY] = on_pty_master,      [S_TYPED] = on_pty_io,        [S_DISK] = on_disk,
};

/* watch is what each slot waits for now (fd -1: nothing). */
static void watch(const struct runner *r, struct pollfd *fds)
{
	const int in[S_N] = {[S_SYNC] = r->sync_in,    [S_ERROR] = r->error_in,     [S_STATUS] = r->status_in,
			     [S_SIGNAL] = r->sigfd,    [S_NOTIFY] = r->notify_sock, [S_LISTENER] = r->listener,
			     [S_NET] = r->px.net,      [S_PROXY] = r->px.report,    [S_TIMER] = r->timer,
			     [S_DISK] = r->disk.timer};
	for (int i = 0; i < S_N; i++)
		fds[i] = (struct pollfd){.fd = in[i], .events = POLLIN};
	/* Not the netlink socket; nor, until it is made, the TUN device
	 * (unattached, it polls as an error). */
	for (int i = 0; i < NET_NFDS; i++)
		fds[S_PX + i].fd = i == NET_RTNL || (i == NET_TUN && r->px.fd[NET_RTNL] >= 0) ? -1 : r->px.fd[i];
	int busy = r->fwd_sent < r->fwd_sendable || r->nsigq;
	fds[S_PLAN] = (struct pollfd){.fd = busy ? r->plan_out : -1, .events = POLLOUT};
	fds[S_PIDS] = (struct pollfd){.fd = r->pids, .events = r->pids_events};
	fds[S_FROZEN] = (struct pollfd){.fd = r->cg.events, .events = POLLPRI};
	for (int i = 0; i < 2; i++) {
		fds[S_OUT1 + 2 * i] = fds[S_GONE1 + 2 * i] = (struct pollfd){.fd = -1};
		if (r->plan->max_output || r->pty.on)
			relay_fds(&r->out[i], &fds[S_OUT1 + 2 * i], &fds[S_GONE1 + 2 * i]);
	}
	pty_fds(r, &fds[S_PTY], &fds[S_TYPED]);
}

/* over reports whether the jail is: its status and error pipes are done,
 * the init stage gone, and in tty mode the pty taken (or never made). */
static int over(const struct runner *r)
{
	return r->status_in < 0 && r->error_in < 0 && (r->pid1 || r->stage_gone) && r->pty.sock < 0;
}

/* runner_loop waits for the jail to end, and for the caller to take its
 * output: each ready fd goes to its slot's handler, as long as the slot
 * still waits on it (an earlier handler of the round may have ended it). */
static void runner_loop(struct runner *r)
{
	uint64_t drain_until = 0;
	for (;;) {
		struct pollfd fds[S_N];
		watch(r, fds);
		int relayed = fds[S_OUT1].fd >= 0 || fds[S_OUT2].fd >= 0;
		if (over(r) && !relayed)
			break;
		if (over(r) && r->pty.slave >= 0) {
			pty_jail_over(r);
			continue;
		}
		/* The jail is over but the caller does not take its output:
		 * a few seconds, then what is left is dropped and jail ends. */
		int timeout = -1;
		if (over(r)) {
			uint64_t now = monotonic_ns();
			if (!drain_until)
				drain_until = now + 5000000000ull;
			if (now >= drain_until) {
				relay_give_up(&r->out[0]);
				relay_give_up(&r->out[1]);
				break;
			}
			timeout = (int)((drain_until - now) / 1000000) + 1;
		}
		if (poll(fds, S_N, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < S_N; i++) {
			struct pollfd now[S_N];
			if (!fds[i].revents)
				continue;
			watch(r, now);
			if (now[i].fd == fds[i].fd)
				handlers[i](r, fds[i].revents);
		}
	}
}

/* runner_end reaps the jail, stops the proxy, measures the run and
 * reports it. */
static void runner_end(struct runner *r)
{
	const struct run_plan *p = r->plan;
	struct outcome *o = &r->o;
	if (!r->stage_gone)
		reap(r->stage);
	if (r->pid1)
		while (wait4(r->pid1, NULL, 0, &o->ru) < 0 && errno == EINTR)
			;
	disk_final(r);
	proxy_last_packets(r);
	proxy_stop(&r->px);
	o->wall_ns = monotonic_ns() - r->started;
	if (!o->setup_ns)
		o->setup_ns = o->wall_ns;
	if (r->cg.n) {
		cg_measure(&r->cg, &o->cg);
		o->have_cg = 1;
		/* A refused fork jail had not seen yet (v1: between two reads)
		 * ends the run as the limit's all the same. */
		if ((p->cg.flags & CG_PIDS_KILL) && o->cg.pids_max > 0)
			o->pids_killed = 1;
	}
	for (int i = 0; (p->max_output || r->pty.on) && i < 2; i++) {
		o->out_dropped[i] = r->out[i].dropped;
		o->out_lost += r->out[i].lost;
		o->out_closed[i] = r->out[i].broken;
	}
	finish(p, o, NULL);
}

/* runner_init sets every fd of r to none. */
static void runner_init(struct runner *r, const struct run_plan *p, uint64_t started)
{
	r->plan = p;
	r->started = started;
	r->o.status_fd = -1;
	r->o.proxy = &r->px;
	r->o.disk = &r->disk;
	r->disk.timer = -1;
	r->plan_out = r->error_in = r->status_in = r->sync_in = r->notify_sock = r->listener = -1;
	r->sigfd = r->timer = r->pids = -1;
	r->out_pipe[0] = r->out_pipe[1] = -1;
	r->out[0].in = r->out[1].in = -1;
	r->pty.sock = r->pty.master = r->pty.slave = r->pty.in = -1;
	r->px.net = r->px.report = r->px.lifeline = -1;
	for (int i = 0; i < NET_NFDS; i++)
		r->px.fd[i] = -1;
	r->cg = (struct cg_run){.dir_fd = -1, .pids_events = -1, .freeze = -1, .events = -1};
}

void runner_main(const struct run_plan *p, char **argv, const char *status_to, uint64_t started)
{
	/* One run a process, and large (the relay's and the proxy's buffers):
	 * in zeroed memory of its own, not on the stack. */
	static struct runner r;
	sigset_t fwd;
	runner_init(&r, p, started);
	runner_open(&r, argv, status_to);
	pty_choose(&r);
	signals_block(&fwd);
	callerfd_setup();
	runner_pipes(&r, argv);
	runner_spawn(&r);
	runner_map(&r);
	runner_send(&r);
	runner_watch(&r, &fwd);
	runner_loop(&r);
	runner_end(&r);
}
