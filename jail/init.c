/* The init stage: a fork of the runner, scrubbed of what is the runner's
 * alone (stagestart.c). It makes the jail's namespaces, takes the
 * command's ids in its user namespace, and becomes the jail's PID 1, which
 * forks the command, builds the root and stays (pid1.c). C, as the runner
 * is, before any Go runtime: unshare(CLONE_NEWUSER) needs a process of one
 * thread. */
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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal/wire/err.h"
#include "jail/keyring.h"
#include "jail/runplan.h"
#include "jail/stage.h"
#include "mount/mount.h"

void stage_error(const struct jerr *e)
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

/* userns_enter makes the user namespace, first and alone: only the runner
 * may write its id maps (an unprivileged process may map just itself, and
 * root maps the jail to an unprivileged uid). It does on 'U', then sends
 * the plan. */
static int userns_enter(struct jerr *e)
{
	if (unshare(CLONE_NEWUSER) < 0)
		return jerr_set(e, errno, "create a user namespace (jail check tells why it is refused)");
	if (write(FD_SYNC, "U", 1) != 1)
		return jerr_set(e, errno, "tell the parent the user namespace exists");
	return 0;
}

/* plan_receive reads what the runner forwards once the maps are written
 * (runplan.h: the plan and its tail), into *buf, which the decoded plan
 * points into. Waiting for it is also the barrier that keeps the jail from
 * running before the runner has finished with it from outside. */
static int plan_receive(struct forwarded *f, unsigned char **buf, struct jerr *e)
{
	uint32_t n;
	if (read_full(FD_PLAN, &n, sizeof n) < 0 || n > FORWARD_MAX)
		return jerr_set(e, errno, "read the plan");
	if (!(*buf = malloc(n ? n : 1)) || read_full(FD_PLAN, *buf, n) < 0)
		return jerr_set(e, errno, "read the plan");
	/* Non-dumpable from now, before anything of the jail exists: nothing
	 * in it may open /proc/1/exe, the host's jail binary, or this
	 * process's memory (CVE-2019-5736). Not before the maps are written:
	 * an unprivileged runner writes them through /proc/PID, which a
	 * non-dumpable process closes to it. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return jerr_set(e, errno, "make the init stage non-dumpable");
	if (forward_decode(*buf, n, f, e) < 0)
		return -1;
	/* Any fd jail itself inherited stops here. */
	if (close_fds_from(FD_TREES + (int)f->plan.ntrees, NULL, 0) < 0)
		return jerr_set(e, errno, "close inherited file descriptors");
	return 0;
}

/* become takes the command's ids in the jail's user namespace, keeping the
 * capabilities the init stage still needs there (none on the host), and
 * checks that it did keep them. */
static int become(const struct run_plan *p, struct jerr *e)
{
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return jerr_set(e, errno, "keep capabilities");
	if (setresgid(p->gid, p->gid, p->gid) < 0)
		return jerr_set(e, errno, "set gid %u", p->gid);
	if ((p->proc_flags & PROC_DROP_GROUPS) && setgroups(0, NULL) < 0)
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

/* namespaces_enter makes the other namespaces, owned by the new user
 * namespace (the cgroup one once the jail is in its cgroup), and takes
 * the command's ids. First it makes the network's sockets (net_prepare)
 * into net, *nnet of them: here, while the runner moves this process into
 * the run's cgroup (on v1 that waits for an RCU grace period), not on
 * PID 1's way to the command; and for the allowlist's TUN device, in the
 * new network namespace, where the device will be, while the host's /dev
 * is visible and, for root, the ids the host checks its node's mode
 * against are still root's. */
static int namespaces_enter(const struct run_plan *p, int *net, int *nnet, struct jerr *e)
{
	if (unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | ((p->proc_flags & PROC_HOST_NET) ? 0 : CLONE_NEWNET)) < 0)
		return jerr_set(e, errno, "create mount, network, IPC and UTS namespaces");
	if (!(p->proc_flags & PROC_HOST_NET) && (loopback_up(e) < 0 || net_prepare(p->proc_flags, net, nnet, e) < 0))
		return -1;
	if (become(p, e) < 0)
		return -1;
	/* Again: a uid change resets it to fs.suid_dumpable, which some
	 * hosts set to 1. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return jerr_set(e, errno, "make the init stage non-dumpable");
	/* SIGCHLD blocked before PID 1 exists: its signalfd then sees the
	 * end of a command that died before it was made. (The signals jail
	 * passes on come on the plan pipe, and wait there.) */
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	return 0;
}

/* cgroup_enter waits for the plan's last byte: the runner has put this
 * process in the run's cgroup (on v1 that waits for an RCU grace period,
 * which the work above overlapped). Everything of the jail is born in it,
 * and its cgroup namespace is rooted there. */
static int cgroup_enter(struct jerr *e)
{
	char placed;
	if (read_full(FD_PLAN, &placed, 1) < 0 || placed != 'C')
		return jerr_set(e, errno, "wait for the runner to put the jail in its cgroup");
	if (unshare(CLONE_NEWCGROUP) < 0)
		return jerr_set(e, errno, "create the cgroup namespace");
	return 0;
}

/* parent_gone reports whether jail has died: it holds the plan pipe's write
 * end open for as long as it lives. */
static int parent_gone(void)
{
	struct pollfd p = {.fd = FD_PLAN, .events = POLLIN};
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR));
}

/* pid1_start makes PID 1 of a new pid namespace, a child of jail itself
 * (CLONE_PARENT): jail waits for it directly, and this process, its work
 * done, tells jail the pid and goes. It returns in PID 1. */
static int pid1_start(struct jerr *e)
{
	pid_t pid1 = (pid_t)syscall(SYS_clone, CLONE_PARENT | CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0);
	if (pid1 < 0)
		return jerr_set(e, errno, "create the pid namespace");
	if (pid1 > 0) {
		uint32_t v = (uint32_t)pid1;
		_exit(write(FD_SYNC, &v, sizeof v) == sizeof v ? 0 : 125);
	}
	close(FD_SYNC);
	/* When jail dies, the jail dies: first with it by signal, and should
	 * it be gone already, now. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || parent_gone())
		_exit(125);
	return 0;
}

/* keyring_join gives the jail a session keyring of its own: the caller's,
 * with API tokens or Kerberos tickets, must not be readable or replaceable
 * from it (a kernel without keyrings, ENOSYS, has none to reach). Where a
 * seccomp filter outside jail refuses keyctl (Docker's default profile:
 * EPERM for every operation, one the kernel does not know too; LXC's:
 * ENOSYS), the run fails saying so, or, when the profile allows it
 * (session_keyring = "best-effort": NewPlan checked that the command's own
 * filter refuses the keyring's syscalls and /proc/keys is masked, and the
 * init stage's fork that the caller has no key in its keyrings,
 * keyring.c), goes on in the caller's, and tells the runner, which says so
 * and records it. */
static int keyring_join(const struct run_plan *p, struct jerr *e)
{
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) >= 0)
		return 0;
	int err = errno;
	/* ENOSYS from a kernel with keyrings (it has /proc/key-users) is a
	 * filter's answer (LXC's), and leaves the caller's keyring too. */
	if (err == ENOSYS && access("/proc/key-users", F_OK) < 0)
		return 0;
	int filtered = (err == EPERM || err == ENOSYS) && keyring_filtered();
	if (!filtered)
		return jerr_set(e, err, "join a new session keyring");
	if (!(p->proc_flags & PROC_KEYRING_BEST_EFFORT))
		return jerr_set(e, 0,
				"join a new session keyring: a seccomp filter outside jail refuses keyctl (Docker's default profile does); "
				"fix: run the container with jail's deploy/seccomp-jail.json (docker run --security-opt seccomp=seccomp-jail.json), "
				"or let the jail go on in the caller's keyring, which its own filter keeps it from using: session_keyring = "
				"\"best-effort\" in the profile");
	struct jerr note = {0};
	jerr_set(&note, 0,
		 "session keyring: the jail goes on in the caller's, as the profile allows (session_keyring = \"best-effort\"): a seccomp "
		 "filter outside jail refuses keyctl, and the jail's own refuses the keyring's syscalls");
	note.kind = JERR_NOTE_KEYRING;
	stage_error(&note);
	return 0;
}

/* pid1_build is PID 1 until the command runs: what needs no root (a
 * session keyring of its own, since the caller's, with API tokens or
 * kerberos tickets, must not be readable or replaceable from the jail;
 * the hostname), the command's process forked, the network's sockets net
 * handed to the runner, the root built, in tty mode the pty made; then it
 * lets the command exec and stays as the jail's init. It returns only on failure. */
static int pid1_build(const struct forwarded *f, const int *net, int nnet, struct jerr *e)
{
	const struct run_plan *p = &f->plan;
	if (keyring_join(p, e) < 0)
		return -1;
	if (sethostname(p->hostname, strlen(p->hostname)) < 0)
		return jerr_set(e, errno, "set hostname %s", p->hostname);
	/* The command's process, forked now so that loading its seccomp
	 * filter (the kernel's JIT: a quarter of a millisecond) overlaps
	 * building the root; it waits on FD_GO before its chdir and exec.
	 * At the old root, pivot_root moves its root and cwd along. The
	 * keyring it inherits. */
	int go[2];
	if (chdir("/") < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, go) < 0)
		return jerr_set(e, errno, "the command's go socket");
	pid_t pid = fork();
	if (pid < 0)
		return jerr_set(e, errno, "fork the command");
	if (pid == 0) {
		net_close_all(net, nnet);
		if (go[1] != FD_GO && dup3(go[1], FD_GO, O_CLOEXEC) < 0)
			_exit(125);
		command_exec(f);
	}
	close(go[1]);
	if (nnet && net_send(FD_NET, net, nnet, e) < 0)
		return -1;
	close(FD_NET);
	net_close_all(net, nnet);

	umask(0); /* modes in the plan are exact */
	struct wire mounts = {.p = (const unsigned char *)p->mounts, .end = (const unsigned char *)p->mounts + p->mounts_len};
	if (jail_mount_build(&mounts, FD_TREES, (int)p->ntrees, e) < 0)
		return -1;
	for (uint32_t i = 0; i < p->ntrees; i++)
		close(FD_TREES + (int)i);
	/* The pty, now that the jail's devpts is its /dev/pts. */
	if (f->tty && pty_open(f, go[0], e) < 0)
		return -1;
	close(FD_TTY);
	/* From here only the command reports errors; its copy of the error
	 * pipe closes on exec, which tells the runner setup is done. Should
	 * the command be gone already, it said why on the error pipe (or was
	 * killed), and PID 1 reaps it. */
	(void)send(go[0], "G", 1, MSG_NOSIGNAL);
	close(go[0]);
	close(FD_ERR);
	close(FD_NOTIFY);
	pid1_run(pid, p->disk_limit || p->session_disk);
}

int init_stage(void)
{
	struct jerr e = {0};
	struct forwarded f;
	unsigned char *buf = NULL;
	int net[NET_NFDS], nnet = 0;
	memset(&f, 0, sizeof f);

	prctl(PR_SET_NAME, "jail-init", 0, 0, 0);
	for (int fd = FD_PLAN; fd < FD_TREES; fd++)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	/* The containment checklist: every step of the init stage, in order.
	 * Each either succeeds or says why, and the run ends. */
	if (userns_enter(&e) < 0 || plan_receive(&f, &buf, &e) < 0 || namespaces_enter(&f.plan, net, &nnet, &e) < 0 ||
	    cgroup_enter(&e) < 0 || pid1_start(&e) < 0)
		goto fail;
	pid1_build(&f, net, nnet, &e);
fail:
	stage_error(&e);
	forward_free(&f);
	free(buf);
	return 125;
}
