/* A session's run (--session ID) on the cached path: where the session's
 * workspace is, for the plan cache's key, and, when the constructor
 * replays a cached plan, the session opened and locked as sessions.Open
 * (sessions/sessions.go) does. Run from the jail binary's constructor
 * before the Go runtime starts (and by the runner, for the key of what it
 * stores): C, so that an agent's repeated session call replays its plan
 * without starting Go.
 *
 * This side never makes and never refuses: it goes on only where Go's
 * Open would succeed without making anything, and hands everything else
 * (a session to make, a refusal, an errno it did not expect) to Go, which
 * does it all again and is the one owner of the messages, the failure
 * record and exit 125 (sessions_test.go runs every case through both). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "plancache/entry.h"
#include "plancache/plancache.h"

int pc_clean(const char *path, char *out, size_t n)
{
	/* Go's lexical Clean, for rooted paths: each "" and "." element
	 * dropped, each ".." taking back the one before (none above "/"). */
	size_t len = strlen(path), r = 1, w = 1;
	if (path[0] != '/' || len >= n)
		return -1;
	out[0] = '/';
	while (r < len) {
		if (path[r] == '/') {
			r++;
		} else if (path[r] == '.' && (r + 1 == len || path[r + 1] == '/')) {
			r++;
		} else if (path[r] == '.' && path[r + 1] == '.' && (r + 2 == len || path[r + 2] == '/')) {
			r += 2;
			while (w > 1 && out[--w] != '/')
				;
		} else {
			if (w != 1)
				out[w++] = '/';
			while (r < len && path[r] != '/')
				out[w++] = path[r++];
		}
	}
	out[w] = 0;
	return 0;
}

int pc_session_id_ok(const char *id)
{
	/* sessions.Check: it names a directory, so no '/', and neither "."
	 * nor ".." nor an option's leading '-'. */
	size_t n = strlen(id);
	if (n == 0 || n > PC_SESSION_ID_MAX || id[0] == '-' || id[0] == '.')
		return 0;
	for (const char *c = id; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
		      *c == '_' || *c == '.'))
			return 0;
	return 1;
}

int pc_session_state(const char *state_env, const char *home, unsigned euid, char *out, size_t n)
{
	/* sessions.StateDir: $JAIL_STATE_DIR, else /var/lib/jail for root and
	 * ~/.local/state/jail for others; Go refuses a relative one. */
	if (state_env && *state_env)
		return pc_clean(state_env, out, n);
	if (euid == 0)
		return pc_clean(PC_SESSION_ROOT_STATE, out, n);
	if (!home || home[0] != '/')
		return -1;
	char joined[PC_PATH_MAX];
	size_t h = strlen(home);
	if (h + sizeof "/" PC_SESSION_USER_STATE > sizeof joined)
		return -1;
	memcpy(joined, home, h);
	memcpy(joined + h, "/" PC_SESSION_USER_STATE, sizeof "/" PC_SESSION_USER_STATE);
	return pc_clean(joined, out, n);
}

/* state_dir is this caller's state directory, from its environment. */
static int state_dir(char *out, size_t n)
{
	return pc_session_state(getenv("JAIL_STATE_DIR"), getenv("HOME"), (unsigned)geteuid(), out, n);
}

/* session_dir is STATE/sessions/ID, as Go's filepath.Join makes it; the id
 * is one sessions.Check takes (no '/', no dots alone). */
static int session_dir(const char *id, char *out, size_t n)
{
	char state[PC_PATH_MAX];
	if (!pc_session_id_ok(id) || state_dir(state, sizeof state) < 0)
		return -1;
	size_t s = strcmp(state, "/") == 0 ? 0 : strlen(state), i = strlen(id);
	if (s + sizeof "/sessions/" + i > n)
		return -1;
	memcpy(out, state, s);
	memcpy(out + s, "/sessions/", sizeof "/sessions/" - 1);
	memcpy(out + s + sizeof "/sessions/" - 1, id, i + 1);
	return 0;
}

int pc_session_workspace(const char *id, char *out, size_t n)
{
	size_t d;
	if (session_dir(id, out, n) < 0 || (d = strlen(out)) + sizeof "/workspace" > n)
		return -1;
	memcpy(out + d, "/workspace", sizeof "/workspace");
	return 0;
}

/* private_fd keeps fd if it is the caller's and its mode shows none of
 * bits (sessions.go's safeState and ownedDir); else it closes it. */
static int private_fd(int fd, mode_t bits)
{
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & bits))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* private_at opens name in at if it is a directory, not a link to one, of
 * the caller's, its mode showing none of bits. O_PATH: it is only walked
 * and checked. */
static int private_at(int at, const char *name, mode_t bits)
{
	return private_fd(openat(at, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), bits);
}

/* state_at opens the state directory if no part of its path is a symlink
 * (Go: EvalSymlinks(state) == state) and it is the caller's, writable by
 * no one else. openat2 fails before Linux 5.6: that is Go's, too. */
static int state_at(const char *state)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	return private_fd((int)syscall(SYS_openat2, AT_FDCWD, state, &how, sizeof how), 022);
}

/* still_held says the lock fd holds is still the session's: rm renames a
 * session away under its exclusive lock before it removes it, so a lock
 * waited for may be a removed session's by the time it is held. */
static int still_held(int sessions, const char *id, int dir, int lock)
{
	struct stat d, dnow, l, lnow;
	return fstat(dir, &d) == 0 && fstatat(sessions, id, &dnow, AT_SYMLINK_NOFOLLOW) == 0 && d.st_dev == dnow.st_dev &&
	       d.st_ino == dnow.st_ino && fstat(lock, &l) == 0 && l.st_nlink > 0 &&
	       fstatat(dir, PC_SESSION_LOCK, &lnow, AT_SYMLINK_NOFOLLOW) == 0 && l.st_dev == lnow.st_dev &&
	       l.st_ino == lnow.st_ino;
}

/* lock_session opens the session's lock (a regular file, never through a
 * link) and takes it shared, waiting while rm or gc hold it; -1 when it is
 * missing, not the session's once held, or anything else Go must see. */
static int lock_session(int sessions, const char *id, int dir)
{
	/* O_NONBLOCK: something other than a file where the lock is (a FIFO)
	 * must not block the open; it is refused below. */
	int fd = openat(dir, PC_SESSION_LOCK, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	int r = -1;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		while ((r = flock(fd, LOCK_SH)) < 0 && errno == EINTR)
			;
	}
	if (r < 0 || !still_held(sessions, id, dir, fd)) {
		close(fd);
		return -1;
	}
	return fd;
}

int pc_session_open(const char *id, unsigned uid, int *lock)
{
	char state[PC_PATH_MAX];
	int st = -1, sessions = -1, dir = -1, fd = -1;
	struct stat ws, secrets;
	*lock = -1;
	if (!pc_session_id_ok(id) || state_dir(state, sizeof state) < 0)
		return -1;
	/* In Go's order: the state directory, sessions/, the session's own
	 * directory, its workspace (the jail's host uid's), its lock. */
	if ((st = state_at(state)) < 0 || (sessions = private_at(st, PC_SESSION_DIR, 077)) < 0 ||
	    (dir = private_at(sessions, id, 077)) < 0)
		goto go;
	if (fstatat(dir, PC_SESSION_WORKSPACE, &ws, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(ws.st_mode) || ws.st_uid != uid)
		goto go;
	if ((fd = lock_session(sessions, id, dir)) < 0)
		goto go;
	/* The session's own secrets (overrides.go): a run that holds secrets
	 * is never cached, so a plan replayed here has none; Go reads them. */
	if (fstatat(dir, PC_SESSION_SECRETS, &secrets, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		goto go;
	futimens(fd, NULL); /* used now: jail sessions list and gc read it */
	close(dir);
	close(sessions);
	close(st);
	*lock = fd;
	return 0;
go:
	if (fd >= 0)
		close(fd);
	if (dir >= 0)
		close(dir);
	if (sessions >= 0)
		close(sessions);
	if (st >= 0)
		close(st);
	return -1;
}

int plancache_session_open(const char *id, unsigned uid, int *lock)
{
	int saved = errno, r = pc_session_open(id, uid, lock);
	errno = saved;
	return r;
}
