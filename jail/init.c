/* The init stage: the jail binary re-executed inside the new namespaces.
 * It runs as a constructor, before the Go runtime starts, so a jail pays for
 * one Go start (the parent's), not two; it never returns to Go. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal/wire/err.h"
#include "internal/wire/wire.h"
#include "jail/runplan.h"
#include "jail/stage.h"
#include "mount/mount.h"
#include "plancache/plancache.h"

extern char **environ;

/* report sends the one-line error to the parent. */
static void report(const struct jerr *e)
{
	char line[sizeof e->msg + 2];
	size_t n = strnlen(e->msg, sizeof e->msg);
	line[0] = e->kind ? e->kind : JERR_SETUP;
	memcpy(line + 1, e->msg, n);
	line[n + 1] = '\n';
	ssize_t w = write(FD_ERR, line, n + 2);
	(void)w;
}

static int read_full(int fd, void *buf, size_t n)
{
	unsigned char *p = buf;
	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* read_plan reads the plan the parent writes after the spawn. Waiting for
 * it is also the barrier that keeps the jail from running before the parent
 * has finished with it from outside. */
static unsigned char *read_plan(size_t *len, struct jerr *e)
{
	uint32_t n;
	if (read_full(FD_PLAN, &n, sizeof n) < 0 || n > (64u << 20)) {
		jerr_set(e, errno, "read the plan");
		return NULL;
	}
	unsigned char *buf = malloc(n ? n : 1);
	if (!buf || read_full(FD_PLAN, buf, n) < 0) {
		jerr_set(e, errno, "read the plan");
		return NULL;
	}
	*len = n;
	return buf;
}

static char **strv(struct wire *w)
{
	uint32_t n = wire_u32(w);
	if (w->bad || n > 1u << 20)
		return NULL;
	char **v = calloc((size_t)n + 1, sizeof *v);
	for (uint32_t i = 0; v && i < n; i++)
		v[i] = (char *)wire_str(w);
	return v;
}

static int decode_proc(struct wire *w, struct proc_plan *p, struct jerr *e)
{
	p->flags = wire_u32(w);
	p->uid = wire_u32(w);
	p->gid = wire_u32(w);
	p->hostname = wire_str(w);
	p->cwd = wire_str(w);
	p->argv = strv(w);
	p->envp = strv(w);
	p->nrlimits = wire_u32(w);
	if (!w->bad && p->nrlimits < 64) {
		p->rlimits = calloc(p->nrlimits ? p->nrlimits : 1, sizeof *p->rlimits);
		for (uint32_t i = 0; p->rlimits && i < p->nrlimits; i++) {
			p->rlimits[i].resource = wire_u32(w);
			p->rlimits[i].soft = wire_u64(w);
			p->rlimits[i].hard = wire_u64(w);
		}
	}
	p->umask = wire_u32(w);
	p->sc_flags = wire_u32(w);
	p->sc_bpf = wire_bytes(w, &p->sc_len);
	if (w->bad || !p->argv || !p->argv[0] || !p->envp || !p->rlimits)
		return jerr_set(e, 0, "process plan: malformed");
	return 0;
}

/* section reads one tagged section of the plan into its own cursor. */
static struct wire section(struct wire *plan, uint32_t want)
{
	struct wire s = {0};
	size_t n;
	uint32_t tag = wire_u32(plan);
	const char *body = wire_bytes(plan, &n);
	if (plan->bad || tag != want) {
		s.bad = 1;
		return s;
	}
	s.p = (const unsigned char *)body;
	s.end = s.p + n;
	return s;
}

/* become takes the command's ids in the jail's user namespace, keeping the
 * capabilities the init stage still needs there (none on the host), and
 * checks that it did keep them. */
static int become(const struct proc_plan *p, struct jerr *e)
{
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return jerr_set(e, errno, "keep capabilities");
	if (setresgid(p->gid, p->gid, p->gid) < 0)
		return jerr_set(e, errno, "set gid %u", p->gid);
	if ((p->flags & PROC_DROP_GROUPS) && setgroups(0, NULL) < 0)
		return jerr_set(e, errno, "drop supplementary groups");
	if (setresuid(p->uid, p->uid, p->uid) < 0)
		return jerr_set(e, errno, "set uid %u", p->uid);
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {{0}};
	if (syscall(SYS_capget, &hdr, data) < 0)
		return jerr_set(e, errno, "read capabilities");
	/* Effective dropped to nothing on the uid change: take it back from
	 * the permitted set, which KEEPCAPS kept. */
	data[0].effective = data[0].permitted;
	data[1].effective = data[1].permitted;
	if (syscall(SYS_capset, &hdr, data) < 0 || !(data[0].effective & (1u << CAP_SYS_ADMIN)))
		return jerr_set(e, errno, "keep the capabilities to build the jail");
	return 0;
}

/* parent_gone reports whether jail has died: it holds the plan pipe's write
 * end open for as long as it lives. */
static int parent_gone(void)
{
	struct pollfd p = {.fd = FD_PLAN, .events = POLLIN};
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR));
}

/* jail_init is the containment checklist: every step of the init stage, in
 * order. Each either succeeds or reports why and ends the run. */
static int jail_init(void)
{
	struct jerr e = {0};
	struct proc_plan proc = {0};
	size_t len;

	prctl(PR_SET_NAME, "jail-init", 0, 0, 0);
	for (int fd = FD_PLAN; fd < FD_TREES; fd++)
		fcntl(fd, F_SETFD, FD_CLOEXEC);

	/* The user namespace first, alone: only the parent may write its id
	 * maps (an unprivileged process may map just itself, and root maps
	 * the jail to an unprivileged uid). It does, then sends the plan. */
	if (unshare(CLONE_NEWUSER) < 0) {
		jerr_set(&e, errno, "create a user namespace (jail check tells why it is refused)");
		goto fail;
	}
	if (write(FD_SYNC, "U", 1) != 1) {
		jerr_set(&e, errno, "tell the parent the user namespace exists");
		goto fail;
	}
	unsigned char *buf = read_plan(&len, &e);
	if (!buf)
		goto fail;
	/* Non-dumpable from now, before anything of the jail exists: nothing
	 * in it may open /proc/1/exe, the host's jail binary, or this
	 * process's memory (CVE-2019-5736). Not before the maps are written:
	 * an unprivileged parent writes them through /proc/PID, which a
	 * non-dumpable process closes to it. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		jerr_set(&e, errno, "make the init stage non-dumpable");
		goto fail;
	}
	struct wire plan = {.p = buf, .end = buf + len};
	uint32_t magic = wire_u32(&plan), version = wire_u32(&plan), ntrees = wire_u32(&plan);
	if (plan.bad || magic != PLAN_MAGIC || version != PLAN_VERSION || ntrees > 4096) {
		jerr_set(&e, 0, "plan: not a jail plan of this version");
		goto fail;
	}
	/* Any fd jail itself inherited stops here. */
	if (close_fds_from(FD_TREES + (int)ntrees, NULL, 0) < 0) {
		jerr_set(&e, errno, "close inherited file descriptors");
		goto fail;
	}
	struct wire mounts = section(&plan, 1);
	struct wire process = section(&plan, 2);
	if (mounts.bad || process.bad) {
		jerr_set(&e, 0, "plan: malformed sections");
		goto fail;
	}
	if (decode_proc(&process, &proc, &e) < 0)
		goto fail;

	/* The other namespaces, owned by the new user namespace; the cgroup
	 * one below, once the jail is in its cgroup. */
	if (unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | ((proc.flags & PROC_HOST_NET) ? 0 : CLONE_NEWNET)) < 0) {
		jerr_set(&e, errno, "create mount, network, IPC and UTS namespaces");
		goto fail;
	}
	if (become(&proc, &e) < 0)
		goto fail;
	/* Again: a uid change resets it to fs.suid_dumpable, which some
	 * hosts set to 1. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		jerr_set(&e, errno, "make the init stage non-dumpable");
		goto fail;
	}
	/* SIGCHLD blocked before PID 1 exists: its signalfd then sees the
	 * end of a command that died before it was made. (The signals jail
	 * passes on come on the plan pipe, and wait there.) */
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	/* The plan's last byte: the runner has put this process in the
	 * run's cgroup (on v1 that waits for an RCU grace period, which the
	 * work above overlapped). Everything of the jail is born in it, and
	 * its cgroup namespace is rooted there. */
	char placed;
	if (read_full(FD_PLAN, &placed, 1) < 0 || placed != 'C') {
		jerr_set(&e, errno, "wait for the runner to put the jail in its cgroup");
		goto fail;
	}
	if (unshare(CLONE_NEWCGROUP) < 0) {
		jerr_set(&e, errno, "create the cgroup namespace");
		goto fail;
	}
	/* PID 1 of a new pid namespace, made a child of jail itself
	 * (CLONE_PARENT): jail waits for it directly, and this process,
	 * its work done, tells jail the pid and goes. */
	pid_t pid1 = (pid_t)syscall(SYS_clone, CLONE_PARENT | CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0);
	if (pid1 < 0) {
		jerr_set(&e, errno, "create the pid namespace");
		goto fail;
	}
	if (pid1 > 0) {
		uint32_t v = (uint32_t)pid1;
		_exit(write(FD_SYNC, &v, sizeof v) == sizeof v ? 0 : 125);
	}
	close(FD_SYNC);
	/* When jail dies, the jail dies: first with it by signal, and should
	 * it be gone already, now. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || parent_gone())
		_exit(125);

	/* What needs no root: the network, a session keyring of its own
	 * (the caller's, with API tokens or kerberos tickets, must not be
	 * readable or replaceable from the jail), the hostname. The command
	 * forked next inherits the keyring. */
	if (!(proc.flags & PROC_HOST_NET) && loopback_up(&e) < 0)
		goto fail;
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS) {
		jerr_set(&e, errno, "join a new session keyring");
		goto fail;
	}
	if (sethostname(proc.hostname, strlen(proc.hostname)) < 0) {
		jerr_set(&e, errno, "set hostname %s", proc.hostname);
		goto fail;
	}
	/* The command's process, forked now so that loading its seccomp
	 * filter (the kernel's JIT: a quarter of a millisecond) overlaps
	 * building the root; it waits on FD_GO before its chdir and exec.
	 * At the old root, pivot_root moves its root and cwd along. */
	int go[2];
	if (chdir("/") < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, go) < 0) {
		jerr_set(&e, errno, "the command's go socket");
		goto fail;
	}
	pid_t pid = fork();
	if (pid < 0) {
		jerr_set(&e, errno, "fork the command");
		goto fail;
	}
	if (pid == 0) {
		if (go[1] != FD_GO && dup3(go[1], FD_GO, O_CLOEXEC) < 0)
			_exit(125);
		command_exec(&proc);
	}
	close(go[1]);
	if ((proc.flags & PROC_ALLOWLIST) && proxy_listeners(FD_NET, &e) < 0)
		goto fail;
	close(FD_NET);

	umask(0); /* modes in the plan are exact */
	if (jail_mount_build(&mounts, FD_TREES, (int)ntrees, &e) < 0)
		goto fail;
	for (uint32_t i = 0; i < ntrees; i++)
		close(FD_TREES + (int)i);
	/* From here only the command reports errors; its copy of the error
	 * pipe closes on exec, which tells the parent setup is done. */
	/* Should the command be gone already, it said why on the error pipe
	 * (or was killed), and PID 1 reaps it below. */
	(void)send(go[0], "G", 1, MSG_NOSIGNAL);
	close(go[0]);
	close(FD_ERR);
	close(FD_NOTIFY);
	pid1_run(pid);

fail:
	report(&e);
	return 125;
}

/* command_after is the command: what follows the first "--" of argv. */
static char **command_after(char **argv)
{
	for (char **a = argv + 1; a && *a; a++)
		if (strcmp(*a, "--") == 0)
			return a[1] ? a + 1 : NULL;
	return NULL;
}

/* run_stage is the runner for a run planned by the Go side (jail.Plan's
 * Exec): the plan is in a sealed memfd, whose fd _JAIL_RUNPLAN names,
 * after the start time and where the status record goes. */
static void run_stage(char **argv)
{
	const char *fdv = getenv("_JAIL_RUNPLAN");
	char **cmd = command_after(argv);
	int fd = fdv ? atoi(fdv) : -1, seals;
	struct stat st;
	struct jerr e = {0};
	struct run_plan plan;
	unsigned char *buf = NULL;
	/* Sealed against writes: the Go side's own memfd, not some fd (one
	 * that cannot be sealed fails F_GET_SEALS: -1, every bit set). */
	if (!cmd || fd < 3 || fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size > (64 << 20) ||
	    (seals = fcntl(fd, F_GET_SEALS)) < 0 || !(seals & F_SEAL_WRITE) || !(buf = malloc((size_t)st.st_size)) ||
	    pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
		dprintf(2, "jail: the runner got no plan\n");
		_exit(125);
	}
	close(fd);
	unsetenv("_JAIL_STAGE");
	unsetenv("_JAIL_RUNPLAN");
	struct wire w = {.p = buf, .end = buf + st.st_size};
	uint32_t magic = wire_u32(&w);
	uint64_t started = wire_u64(&w);
	const char *status_to = wire_str(&w);
	size_t len;
	const unsigned char *rp = (const unsigned char *)wire_bytes(&w, &len);
	if (w.bad || magic != HANDOFF_MAGIC || runplan_decode(rp, len, &plan, &e) < 0) {
		dprintf(2, "jail: %s\n", e.msg[0] ? e.msg : "the runner got a malformed plan");
		_exit(125);
	}
	runner_main(&plan, cmd, status_to, started);
}

/* status_flag notes --status-json's value, the last one, as Go would. */
static void status_flag(void *ctx, const char *name, size_t n, const char *value)
{
	if (n == 11 && strncmp(name, "status-json", n) == 0)
		*(const char **)ctx = value;
}

/* A constructor runs before main and before the Go runtime. Started by
 * the Go side, it runs the stage it is told; started by a caller, it
 * replays a cached plan for exactly this invocation, if there is one, and
 * otherwise returns: Go takes over, plans, caches, and comes back here as
 * the runner. */
__attribute__((constructor)) static void jail_stage_entry(int argc, char **argv, char **envp)
{
	uint64_t started = monotonic_ns();
	(void)argc;
	(void)envp;
	const char *stage = getenv("_JAIL_STAGE");
	if (!stage) {
		char **cmd = command_after(argv);
		size_t len;
		unsigned char *plan = cmd ? plancache_load(argv, &len) : NULL;
		struct run_plan p;
		struct jerr e = {0};
		const char *status_to = NULL;
		/* An empty --status-json is the Go side's to refuse (the key
		 * leaves the flag out, so a plan may be cached). */
		if (plan && runplan_decode(plan, len, &p, &e) == 0 && plancache_args(argv, status_flag, &status_to) == 0 &&
		    (!status_to || status_to[0])) {
			p.cached = 1;
			runner_main(&p, cmd, status_to ? status_to : "", started);
		}
		return;
	}
	if (strcmp(stage, "init") == 0)
		_exit(jail_init());
	if (strcmp(stage, "run") == 0)
		run_stage(argv);
	if (strcmp(stage, "proxy") == 0)
		return; /* Go's: jail/proxy.go */
	if (strcmp(stage, "userns") == 0) {
		/* Holds a user namespace open, for jail check's probe, until
		 * stdin ends. */
		char c;
		for (;;) {
			ssize_t r = read(0, &c, 1);
			if (r == 0 || (r < 0 && errno != EINTR))
				_exit(0);
		}
	}
	_exit(125);
}
