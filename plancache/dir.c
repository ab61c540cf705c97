/* Where the plan cache lives, and the checks that keep it the caller's: what
 * is cached there decides what the next jail may reach. Used by both sides
 * of the cache (lookup.c before the Go runtime starts, store.c in the
 * runner), and by Go for the state directory's path, which no writable bind
 * may reach (plancache.StateDir, plancache.Guarded), and for what jail
 * check says of it (plancache.Where): one rule, in C, for all of them.
 *
 * The places, in order (pc_where): root's is /run/jail. Another caller's
 * is RUN/user/UID/jail, in the private runtime directory a login manager
 * (systemd) makes; where that is missing, $XDG_RUNTIME_DIR/jail, when the
 * variable names a directory of the caller's alone; and only on a system
 * with no RUN/user at all (a container), the state directory's cache/
 * ($JAIL_STATE_DIR, else ~/.local/state/jail, as sessions have it). So a
 * login manager's host never moves the cache into a directory of the
 * caller's that an earlier jail may have been given to write, as it would
 * if a logout's removal of RUN/user/UID sent it there. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "plancache/entry.h"
#include "plancache/plancache.h"

/* owned keeps fd if it is a directory of uid's whose mode shows none of
 * bits; else it closes it and says why. */
static int owned(int fd, unsigned uid, mode_t bits, int *why)
{
	struct stat st;
	if (fd < 0) {
		*why = errno;
		return -1;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != uid || (st.st_mode & bits)) {
		close(fd);
		*why = PC_NOT_PRIVATE;
		return -1;
	}
	return fd;
}

/* private_dir opens name in at only if it is a directory (not a link to
 * one) that uid owns and nobody else may enter; with create it makes it
 * first, 0700, when missing. */
static int private_dir(int at, const char *name, int create, unsigned uid, int *why)
{
	if (create && mkdirat(at, name, 0700) < 0 && errno != EEXIST) {
		*why = errno;
		return -1;
	}
	return owned(openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), uid, 077, why);
}

/* beneath opens the absolute directory path if no part of it is a symlink
 * (as sessions' state directory must be reached) and uid owns it, its
 * mode showing none of bits. */
static int beneath(const char *path, unsigned uid, mode_t bits, int *why)
{
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	return owned((int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how), uid, bits, why);
}

/* root_parent says the directory holding path is root's and no one
 * else may write it, so only root could have made path there (a login
 * manager's /run/user/UID, a container's --tmpfs): a directory the caller
 * made, or a jail of its through a writable bind, is refused. */
static int root_parent(const char *path, int *why)
{
	char parent[PC_PATH_MAX];
	snprintf(parent, sizeof parent, "%s", path);
	char *slash = strrchr(parent, '/');
	if (!slash)
		return 0;
	*(slash == parent ? slash + 1 : slash) = 0;
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, parent, &how, sizeof how);
	struct stat st;
	int ok = fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == 0 && !(st.st_mode & 022);
	if (fd < 0)
		*why = errno;
	else if (!ok)
		*why = PC_PARENT_OPEN;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* make_parents makes the missing directories of path, 0700, as Go's
 * MkdirAll does for sessions' state directory; beneath then checks it. */
static void make_parents(const char *path)
{
	char p[PC_PATH_MAX];
	snprintf(p, sizeof p, "%s", path);
	for (char *s = strchr(p + 1, '/');; s = strchr(s + 1, '/')) {
		if (s)
			*s = 0;
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return;
		if (!s)
			return;
		*s = '/';
	}
}

/* join puts a/b in out; "", and -1, when it does not fit. */
static int join(char *out, const char *a, const char *b)
{
	int n = snprintf(out, PC_PATH_MAX, "%s/%s", strcmp(a, "/") ? a : "", b);
	if (n >= 0 && n < PC_PATH_MAX)
		return 0;
	out[0] = 0;
	return -1;
}

/* place_run opens the runtime directory: run itself for root; run/user/UID
 * for others, which must be theirs alone. jail never makes it: it is the
 * login manager's to make private. */
static int place_run(const struct pc_env *e, struct pc_place *p, int *why)
{
	int run = open(e->run, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (run < 0) {
		*why = errno;
		p->user_dirs = errno != ENOENT;
		return -1;
	}
	if (e->euid == 0)
		return run;
	int user = openat(run, PC_USER, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	p->user_dirs = user >= 0 || errno != ENOENT;
	*why = errno;
	close(run);
	if (user < 0)
		return -1;
	char uid[16];
	snprintf(uid, sizeof uid, "%u", e->euid);
	int fd = private_dir(user, uid, 0, e->euid, why);
	close(user);
	return fd;
}

/* place opens the first place that qualifies (making the state
 * directory's parents with create) and fills in p; -1 when none does.
 * Every place's path is filled in, used or not: each is guarded. */
static int place(const struct pc_env *e, int create, struct pc_place *p)
{
	char base[PC_PATH_MAX], xdg[PC_PATH_MAX], state[PC_PATH_MAX];
	memset(p, 0, sizeof *p);
	p->at = -1;
	if (e->euid == 0) {
		join(p->dir[PC_AT_RUN], e->run, PC_STATE);
		p->why[PC_AT_XDG] = p->why[PC_AT_STATE] = PC_NOT_HERE;
	} else {
		if (snprintf(base, sizeof base, "%s/%s/%u", e->run, PC_USER, e->euid) < PC_PATH_MAX)
			join(p->dir[PC_AT_RUN], base, PC_STATE);
		p->why[PC_AT_XDG] = e->xdg && *e->xdg ? PC_RELATIVE : PC_UNSET;
		if (e->xdg && *e->xdg && pc_clean(e->xdg, xdg, sizeof xdg) == 0) {
			p->why[PC_AT_XDG] = join(p->dir[PC_AT_XDG], xdg, PC_STATE) < 0 ? ENAMETOOLONG : 0;
			if (strcmp(p->dir[PC_AT_XDG], p->dir[PC_AT_RUN]) == 0) {
				p->dir[PC_AT_XDG][0] = 0; /* tried first */
				p->why[PC_AT_XDG] = PC_SAME;
			}
		}
		p->why[PC_AT_STATE] = PC_UNSET;
		if (pc_session_state(e->state, e->home, e->euid, state, sizeof state) == 0)
			p->why[PC_AT_STATE] = join(p->dir[PC_AT_STATE], state, PC_CACHE) < 0 ? ENAMETOOLONG : 0;
	}

	int fd = place_run(e, p, &p->why[PC_AT_RUN]);
	if (fd >= 0) {
		p->at = PC_AT_RUN;
		return fd;
	}
	if (e->euid == 0)
		return -1;
	if (p->dir[PC_AT_XDG][0] && root_parent(xdg, &p->why[PC_AT_XDG]) &&
	    (fd = beneath(xdg, e->euid, 077, &p->why[PC_AT_XDG])) >= 0) {
		p->at = PC_AT_XDG;
		return fd;
	}
	if (p->user_dirs) {
		p->why[PC_AT_STATE] = PC_NOT_HERE;
		return -1;
	}
	if (!p->dir[PC_AT_STATE][0])
		return -1;
	if (create)
		make_parents(state);
	if ((fd = beneath(state, e->euid, 022, &p->why[PC_AT_STATE])) >= 0)
		p->at = PC_AT_STATE;
	return fd;
}

/* state_name is the state directory's name in place at. */
static const char *state_name(int at)
{
	return at == PC_AT_STATE ? PC_CACHE : PC_STATE;
}

int pc_cache_dir(const struct pc_env *e, int create)
{
	struct pc_place p;
	int why, base = place(e, create, &p);
	if (base < 0)
		return -1;
	int state = private_dir(base, state_name(p.at), create, e->euid, &why);
	close(base);
	if (state < 0)
		return -1;
	int plans = private_dir(state, PC_PLANS, create, e->euid, &why);
	close(state);
	return plans;
}

/* makeable says the store could make the missing directory path: its
 * nearest existing parent is one this process may write. */
static int makeable(const char *path)
{
	char p[PC_PATH_MAX];
	snprintf(p, sizeof p, "%s", path);
	for (char *slash; (slash = strrchr(p, '/'));) {
		*(slash == p ? slash + 1 : slash) = 0;
		if (access(p, F_OK) == 0)
			return faccessat(AT_FDCWD, p, W_OK | X_OK, AT_EACCESS) == 0;
		if (slash == p)
			return 0;
	}
	return 0;
}

void pc_where(const struct pc_env *e, struct pc_place *p)
{
	int base = place(e, 0, p);
	if (base < 0) {
		/* A state directory not made yet is the store's to make. */
		if (p->why[PC_AT_STATE] == ENOENT && makeable(p->dir[PC_AT_STATE])) {
			p->at = PC_AT_STATE;
			p->state_why = p->plans_why = ENOENT;
		}
		return;
	}
	int state = private_dir(base, state_name(p->at), 0, e->euid, &p->state_why);
	close(base);
	p->plans_why = ENOENT;
	if (state < 0)
		return;
	int plans = private_dir(state, PC_PLANS, 0, e->euid, &p->plans_why);
	close(state);
	if (plans >= 0) {
		close(plans);
		p->plans_why = 0;
	}
}

void pc_env_self(struct pc_env *e)
{
	*e = (struct pc_env){
		.run = PC_RUN,
		.euid = (unsigned)geteuid(),
		.xdg = getenv("XDG_RUNTIME_DIR"),
		.state = getenv("JAIL_STATE_DIR"),
		.home = getenv("HOME"),
	};
}
