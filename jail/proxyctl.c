/* The network helper's lifecycle, on the runner's side: it takes the
 * sockets made in the jail (netns.c), which PID 1 hands over, starts the
 * helper on their first use, in the run's cgroup from birth, holding none
 * of the caller's files, and unable to outlive the runner; reads its
 * report as it goes; and stops it at the end. C, as the runner is: a replayed run never
 * starts Go, and the helper (Go: proxy/, netstack/) starts only when
 * needed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal/linux/fdpass.h"
#include "jail/proxyctl.h"
#include "jail/runlimits.h"
#include "jail/runner.h"
#include "jail/selfexec.h"
#include "jail/stage.h"

/* The helper's fds, as proxy/proxy.go reads them: its pipes, then the
 * network's sockets in stage.h's NET_* order, but for the netlink socket,
 * which the runner keeps (and closes once the device is made). */
enum { PX_REPORT = 3, PX_CONFIG, PX_LIFELINE, PX_NET, PX_MAX = PX_NET + NET_NFDS };

/* child_fail tells the runner, on the report pipe, why the proxy could
 * not start, and ends the child: the jail then has no network at all. */
static void child_fail(int report, const char *what)
{
	char line[256];
	int n = snprintf(line, sizeof line, "jail: network helper: %s: %s\n", what, strerror(errno));
	if (n > 0 && write(report, line, (size_t)n) < 0)
		_exit(125);
	_exit(125);
}

/* child is the proxy's side of the fork, until its exec: into the run's
 * cgroup first (v1: nothing of the proxy runs outside it; v2 was born
 * there), then /dev/null for stdin, stdout and stderr (the caller's files
 * stay the caller's: a proxy holding them would keep a caller reading to
 * EOF waiting; what it says goes on its report pipe), its fds and nothing
 * else, no new privileges, every signal at its default. */
static void child(const struct cg_run *cg, const int *high, int n, pid_t runner)
{
	static char *const argv[] = {"jail-proxy", NULL};
	/* How many of the network's sockets it has, from PX_NET (which ones,
	 * stage.h's NET_* order says). */
	char count[32];
	snprintf(count, sizeof count, "_JAIL_NET_FDS=%d", n - (PX_NET - PX_REPORT));
	char *const envp[] = {JAIL_STAGE_ENV "proxy", count, NULL};
	int report = high[0];
	struct jerr e;
	if (!cg->v2 && cg->n && cg_join(cg, 0, &e) < 0)
		child_fail(report, "join the run's cgroup");
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		child_fail(report, "stdio");
	if (selfexec_fds(high, n, PX_REPORT) < 0)
		child_fail(report, "fds");
	if (close_fds_from(PX_REPORT + n, NULL, 0) < 0 || chdir("/") < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(PX_REPORT, "close fds, chdir, no_new_privs");
	sigset_t all;
	sigfillset(&all);
	selfexec(argv, envp, &all, runner);
	child_fail(PX_REPORT, "exec");
}

/* net_close closes the runner's copies of the network's sockets. */
static void net_close(struct proxy *px)
{
	for (int i = 0; i < NET_NFDS; i++) {
		if (px->fd[i] >= 0)
			close(px->fd[i]);
		px->fd[i] = -1;
	}
}

/* proxy_start starts the helper on the network's sockets, with config
 * (JSON) on a pipe, in the run's cgroup cg; it returns the report pipe's
 * read end, or -1 when it could not even fork. The sockets are the
 * helper's, or closed, either way. */
static int proxy_start(struct proxy *px, const char *config, const struct cg_run *cg)
{
	int rep[2] = {-1, -1}, cfg[2] = {-1, -1}, life[2] = {-1, -1}, high[PX_MAX - PX_REPORT];
	int ok = 0, raised = 0, nfds = PX_NET - PX_REPORT;
	size_t n = strlen(config);
	if (pipe2(rep, O_CLOEXEC) < 0 || pipe2(cfg, O_CLOEXEC) < 0 || pipe2(life, O_CLOEXEC) < 0)
		goto out;
	/* The configuration fits the pipe (it is small, bounded by the
	 * profile); the proxy reads it to EOF. */
	fcntl(cfg[1], F_SETPIPE_SZ, (int)(n + 4096));
	if (write(cfg[1], config, n) != (ssize_t)n)
		goto out;
	close(cfg[1]);
	cfg[1] = -1;
	/* Above every number the child dup2s onto, so none clobbers another. */
	int src[PX_MAX - PX_REPORT] = {rep[1], cfg[0], life[0]};
	for (int i = 0; i < px->nfds; i++)
		if (px->fd[i] >= 0)
			src[nfds++] = px->fd[i];
	if (fds_above(src, nfds, 16, high) < 0)
		goto out;
	raised = 1;
	/* A fork that the runner waits on until it execs (CLONE_VFORK), not
	 * a vfork: the child does real work (the v1 cgroup move). On v2 it
	 * is born in the run's cgroup. */
	pid_t runner = getpid();
	struct clone_args args = {.flags = CLONE_VFORK, .exit_signal = SIGCHLD};
	if (cg->v2 && cg->dir_fd >= 0) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)cg->dir_fd;
	}
	pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof args);
	if (pid == 0)
		child(cg, high, nfds, runner);
	/* Started, or dead before its exec: then it said why on the report
	 * pipe, and its end there is the jail's loss of network. */
	if (pid > 0) {
		px->pid = pid;
		ok = 1;
	}
out:
	for (int i = 0; raised && i < nfds; i++)
		close(high[i]);
	int fds[] = {rep[1], cfg[0], cfg[1], life[0]};
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	net_close(px);
	if (!ok) {
		if (rep[0] >= 0)
			close(rep[0]);
		if (life[1] >= 0)
			close(life[1]);
		return -1;
	}
	/* The lifeline's write end stays with the runner alone (close on
	 * exec): the proxy reads EOF on it the moment the runner is gone. */
	px->lifeline = life[1];
	return rep[0];
}

void on_proxy_listeners(struct runner *r, short revents)
{
	struct proxy *px = &r->px;
	int fds[NET_NFDS];
	char b;
	/* How many: the resolver's; for the allowlist up to /dev/net/tun,
	 * the device made; or with the netlink socket and the taps, all of
	 * them, or without IPv6's two when the kernel has no IPv6. */
	int allowlist = strcmp(r->plan->net_mode, "allowlist") == 0, eager = (r->plan->proc_flags & PROC_TUN_EAGER) != 0;
	int all = !allowlist ? NET_DNS_FDS : eager ? NET_EAGER_FDS : NET_NFDS;
	int no_v6 = !allowlist || eager ? all : NET_TAP_TCP6;
	/* A message came (not PID 1's EOF, whose error says why) but not
	 * the sockets in it: the jail's network would have nobody serving
	 * it, with the TUN device's connections hanging, so the run ends. */
	int sent = recv(px->net, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
	int n = fd_recv_range(px->net, fds, no_v6, all);
	/* The taps come in pairs, a family's TCP and UDP. */
	if (n > 0 && n != all && n != no_v6) {
		net_close_all(fds, n);
		n = -1;
	}
	if (n > 0) {
		memcpy(px->fd, fds, sizeof fds[0] * (size_t)n);
		px->nfds = n;
	} else if (sent) {
		r->o.fatal = "could not take the jail's network sockets from its PID 1 (file descriptor limit?)";
		kill_jail(r);
	}
	close(px->net);
	px->net = -1;
}

/* The network's first use: the TUN device, unless made at the start, is
 * made now (the catch-all routes go), before the helper that answers the
 * lookup starts. Without the device or the helper the jail has no
 * network at all: with the device there, connections would hang, so the
 * run ends. */
static const char *first_use(struct runner *r)
{
	struct proxy *px = &r->px;
	if (px->fd[NET_RTNL] >= 0) {
		/* IPv6 as the init stage found it in the jail's namespace: its
		 * taps came. */
		int made = tun_make(px->fd[NET_TUN], px->fd[NET_RTNL], px->nfds == NET_NFDS, 1, &px->err);
		close(px->fd[NET_RTNL]);
		px->fd[NET_RTNL] = -1;
		if (made < 0) {
			net_close(px);
			return px->err.msg;
		}
	}
	px->report = proxy_start(px, r->plan->net_config, &r->cg);
	return px->report < 0 ? "could not start the jail's network helper (fork)" : NULL;
}

void on_proxy_connect(struct runner *r, short revents)
{
	const char *why = first_use(r);
	if (why)
		r->o.fatal = why;
	if (r->o.fatal)
		kill_jail(r);
}

void proxy_last_packets(struct runner *r)
{
	struct proxy *px = &r->px;
	struct pollfd taps[NET_NFDS - NET_TAP_TCP4];
	int n = 0;
	if (px->pid)
		return;
	for (int i = NET_TAP_TCP4; i < NET_NFDS; i++)
		if (px->fd[i] >= 0)
			taps[n++] = (struct pollfd){.fd = px->fd[i], .events = POLLIN};
	if (!n || poll(taps, (nfds_t)n, 0) <= 0)
		return;
	/* A helper born into a frozen cgroup would stop before its exec,
	 * with the runner waiting on it (CLONE_VFORK). */
	cg_thaw(&r->cg);
	/* The command's run went well: a refusal that cannot be recorded
	 * now only leaves the record incomplete. */
	if (first_use(r))
		px->incomplete = 1;
}

void on_proxy_report(struct runner *r, short revents)
{
	if (proxy_read(&r->px, r->px.report))
		return;
	close(r->px.report);
	r->px.report = -1;
	r->px.failed = 1;
	/* Still running: the command's status has not come. */
	if (r->px.nfds > NET_TUN && r->status_in >= 0) {
		r->o.fatal = "the jail's network stack ended during the run (its connections would hang), so the run was ended";
		kill_jail(r);
	}
}

/* printable copies at most size-1 bytes of s into out, each byte that is
 * not printable ASCII as '?': what reaches the caller's terminal from the
 * proxy (which a jail talks to) carries no control sequence. */
static void printable(char *out, size_t size, const char *s, size_t n)
{
	if (n > size - 1)
		n = size - 1;
	for (size_t i = 0; i < n; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	out[n] = 0;
}

/* rank orders refusal lines for the five said: first those no --allow
 * would lift (an internal address such as the metadata service, an SNI
 * or Host mismatch, a datagram), whose words the jail cannot choose; then
 * connections to names off the list; then lookups of them, which a jail
 * can make by the thousand with names of its choosing. */
static int rank(const char *line)
{
	if (!strstr(line, "allow it with --allow "))
		return 0;
	return strstr(line, "refused lookup of ") ? 2 : 1;
}

/* keep_refused keeps a refusal line for the end of the run: the
 * PROXY_REFUSED_SAID first of the best rank, in that order (the record
 * has them all). */
static void keep_refused(struct proxy *px, const char *line, size_t n)
{
	unsigned kept = px->nrefused < PROXY_REFUSED_SAID ? px->nrefused : PROXY_REFUSED_SAID;
	char tmp[PROXY_REFUSED_LEN];
	printable(tmp, sizeof tmp, line, n);
	int r = rank(tmp);
	unsigned at = kept;
	while (at > 0 && rank(px->refused[at - 1]) > r)
		at--;
	if (at >= PROXY_REFUSED_SAID)
		return;
	unsigned last = kept < PROXY_REFUSED_SAID ? kept : PROXY_REFUSED_SAID - 1;
	for (unsigned i = last; i > at; i--)
		memcpy(px->refused[i], px->refused[i - 1], sizeof px->refused[0]);
	memcpy(px->refused[at], tmp, sizeof tmp);
}

/* take keeps a whole line the proxy wrote: its report (JSON fields of
 * the status record, the last one wins), a refusal to name at the end of
 * the run (the first few, and a count), or a message of its own, which
 * the runner passes on (the first few). */
static void take(struct proxy *px)
{
	static const char report[] = "\"network_denied\":", refused[] = "refused ";
	if (strncmp(px->line, refused, sizeof refused - 1) == 0) {
		keep_refused(px, px->line + sizeof refused - 1, px->len - (sizeof refused - 1));
		if (px->nrefused < UINT_MAX)
			px->nrefused++;
		return;
	}
	if (strncmp(px->line, report, sizeof report - 1) == 0) {
		/* A report ends its network_allowed list; one that does not
		 * was cut (the proxy died writing it, or something of the Go
		 * runtime's got in): never spliced into the record. */
		if (px->len > 0 && px->line[px->len - 1] == ']')
			memcpy(px->last, px->line, px->len + 1);
		else
			px->incomplete = 1;
		return;
	}
	size_t used = strlen(px->note);
	if (px->len == 0 || used + px->len + 3 > sizeof px->note)
		return;
	if (used)
		px->note[used++] = ';', px->note[used++] = ' ';
	printable(px->note + used, sizeof px->note - used, px->line, px->len);
}

int proxy_read(struct proxy *px, int fd)
{
	char buf[8192];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	if (n <= 0) {
		/* A line the proxy did not finish: its last report, maybe. */
		if (px->len > 0 || px->overlong)
			px->incomplete = 1;
		px->len = 0;
		return 0;
	}
	/* Whole lines only: one too long for the buffer is dropped, never
	 * cut (the record would not be JSON). */
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			px->line[px->len] = 0;
			if (!px->overlong)
				take(px);
			else
				px->incomplete = 1;
			px->len = 0;
			px->overlong = 0;
		} else if (px->len < sizeof px->line - 1) {
			px->line[px->len++] = buf[i];
		} else {
			px->overlong = 1;
		}
	}
	return 1;
}

void proxy_stop(struct proxy *px)
{
	int fd = px->report;
	net_close(px);
	if (!px->pid)
		return;
	/* The end, asked for on the lifeline (proxy/proxy.go's stopByte): a
	 * byte waits until the helper reads it, where a signal before its
	 * runtime had a handler would end it without its last report. */
	if (px->lifeline < 0 || write(px->lifeline, "S", 1) != 1)
		kill(px->pid, SIGTERM);
	uint64_t until = monotonic_ns() + 1000000000u;
	while (fd >= 0) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		uint64_t now = monotonic_ns();
		if (now >= until || poll(&pf, 1, (int)((until - now) / 1000000) + 1) <= 0 || !proxy_read(px, fd))
			break;
	}
	kill(px->pid, SIGKILL);
	while (waitpid(px->pid, NULL, 0) < 0 && errno == EINTR)
		;
	px->pid = 0;
	if (px->len > 0 || px->overlong)
		px->incomplete = 1; /* killed in the middle of a line */
	if (fd >= 0)
		close(fd);
	px->report = -1;
	if (px->lifeline >= 0)
		close(px->lifeline);
	px->lifeline = -1;
}
