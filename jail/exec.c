/* The command's side of PID 1's fork: its session, limits and environment,
 * every privilege dropped, the seccomp filter, then exec. The command's
 * process runs it until its exec: C, as the whole init stage is (stage.h
 * says why). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal/wire/err.h"
#include "jail/stage.h"
#include "seccomp/sc.h"

static void fail(struct jerr *e) __attribute__((noreturn));

static void fail(struct jerr *e)
{
	stage_error(e);
	_exit(e->kind == JERR_NOTFOUND ? 127 : e->kind == JERR_NOEXEC ? 126 : 125);
}

/* drop_privileges empties every capability set, locks the securebits so no
 * exec or uid change can bring one back, and sets no_new_privs, so neither
 * setuid binaries nor file capabilities grant anything either. */
static int drop_privileges(struct jerr *e)
{
	unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
			     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
		return jerr_set(e, errno, "lock the securebits");
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return jerr_set(e, errno, "drop capability %d from the bounding set", cap);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return jerr_set(e, errno, "clear the ambient capabilities");
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {{0}};
	if (syscall(SYS_capset, &hdr, data) < 0)
		return jerr_set(e, errno, "drop every capability");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return jerr_set(e, errno, "set no_new_privs");
	return 0;
}

static const char *env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (; *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/* exec_search is execvp with the jail's PATH, not this process's, and with
 * "not found" told apart from "found but not runnable". */
static void exec_search(char *const *argv, char *const *envp, struct jerr *e)
{
	const char *file = argv[0];
	if (strchr(file, '/')) {
		execve(file, argv, envp);
		int err = errno;
		e->kind = (err == ENOENT || err == ENOTDIR) ? JERR_NOTFOUND : JERR_NOEXEC;
		snprintf(e->msg, sizeof e->msg, "%s: %s", file, strerror(err));
		return;
	}
	const char *path = env_get(envp, "PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	int denied = 0, other = 0;
	for (;;) {
		const char *end = strchrnul(path, ':');
		char full[PATH_MAX];
		size_t dlen = (size_t)(end - path);
		if (dlen == 0)
			snprintf(full, sizeof full, "%s", file);
		else
			snprintf(full, sizeof full, "%.*s/%s", (int)dlen, path, file);
		execve(full, argv, envp);
		if (errno == EACCES)
			denied = 1;
		else if (errno != ENOENT && errno != ENOTDIR)
			other = errno;
		if (!*end)
			break;
		path = end + 1;
	}
	if (other || denied) {
		e->kind = JERR_NOEXEC;
		snprintf(e->msg, sizeof e->msg, "%s: %s", file, strerror(other ? other : EACCES));
	} else {
		e->kind = JERR_NOTFOUND;
		snprintf(e->msg, sizeof e->msg, "%s: command not found", file);
	}
}

void command_exec(const struct forwarded *f)
{
	const struct run_plan *p = &f->plan;
	struct jerr e = {0};
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	/* The command leads a process group of its own either way: PID 1
	 * passes the terminal's signals (^C, ^Z) to the whole of it. In tty
	 * mode it leads a session whose terminal is the jail's pty, before
	 * its privileges and its filter go. */
	int take = f->tty ? pty_take(&e) : 0;
	if (take == -2)
		_exit(125); /* PID 1 failed, and says why */
	if (take < 0)
		fail(&e);
	if (!f->tty && ((p->proc_flags & PROC_NEW_SESSION) ? setsid() < 0 : setpgid(0, 0) < 0)) {
		jerr_set(&e, errno, (p->proc_flags & PROC_NEW_SESSION) ? "setsid" : "setpgid");
		fail(&e);
	}
	umask(f->umask);
	/* No real-time scheduling and no priority above the normal, whatever
	 * the caller was allowed: a real-time task is not held by the run's
	 * CPU quota, and either could starve the jail's PID 1. */
	static const int no_raise[] = {RLIMIT_RTPRIO, RLIMIT_NICE};
	for (size_t i = 0; i < sizeof no_raise / sizeof no_raise[0]; i++) {
		struct rlimit zero = {0, 0};
		if (setrlimit(no_raise[i], &zero) < 0) {
			jerr_set(&e, errno, "set rlimit %d to 0", no_raise[i]);
			fail(&e);
		}
	}
	for (uint32_t i = 0; i < p->nrlimits; i++) {
		struct rlimit rl = {.rlim_cur = p->rlimits[i].soft, .rlim_max = p->rlimits[i].hard};
		if (setrlimit((int)p->rlimits[i].resource, &rl) < 0) {
			jerr_set(&e, errno, "set rlimit %u to %llu (raising a hard limit needs the host's root)",
				 p->rlimits[i].resource, (unsigned long long)p->rlimits[i].hard);
			fail(&e);
		}
	}
	/* Only 0, 1 and 2 cross into the command; the error pipe and the go
	 * socket close on exec, the notify socket once the filter is loaded. */
	static const int keep[] = {FD_ERR, FD_GO, FD_NOTIFY};
	if (close_fds_from(3, keep, 3) < 0) {
		jerr_set(&e, errno, "close file descriptors");
		fail(&e);
	}
	if (drop_privileges(&e) < 0)
		fail(&e);
	/* From here the filter sees every call: what follows is what
	 * seccomp.Needed lists (sendmsg, read, chdir, execve, exit_group). */
	if (p->sc_flags & SC_LOAD) {
		if (sc_load(p->sc_flags, p->sc_bpf, p->sc_len, FD_NOTIFY, &e) < 0)
			fail(&e);
	} else {
		close(FD_NOTIFY);
	}
	/* PID 1 builds the root meanwhile. EOF: it failed, and says why. */
	char go;
	if (read(FD_GO, &go, 1) != 1)
		_exit(125);
	/* pivot_root moved this process's root and working directory (it
	 * was at the old root) to the new root. */
	if (chdir(p->cwd) < 0) {
		jerr_set(&e, errno, "working directory %s", p->cwd);
		fail(&e);
	}
	exec_search(f->argv, f->envp, &e);
	fail(&e);
}
