/* Where the plan cache lives, and the checks that keep it the caller's: what
 * is cached there decides what the next jail may reach. Used by both sides
 * of the cache (lookup.c before the Go runtime starts, store.c in the
 * runner), and by Go for the state directory's path, which no writable bind
 * may reach (plancache.StateDir). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plancache/entry.h"
#include "plancache/plancache.h"

/* private_dir opens name in at only if it is a directory (not a link to
 * one) that the caller owns and nobody else may enter; with create it
 * makes it first, 0700, when missing. */
static int private_dir(int at, const char *name, int create)
{
	if (create && mkdirat(at, name, 0700) < 0 && errno != EEXIST)
		return -1;
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* runtime_dir opens the caller's runtime directory: run itself for root;
 * run/user/UID for others, which must be theirs alone. jail never makes
 * it: it is the system's (systemd's) to make private. */
static int runtime_dir(const char *run)
{
	int fd = open(run, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || geteuid() == 0)
		return fd;
	int user = openat(fd, PC_USER, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(fd);
	if (user < 0)
		return -1;
	char uid[16];
	snprintf(uid, sizeof uid, "%u", (unsigned)geteuid());
	fd = private_dir(user, uid, 0);
	close(user);
	return fd;
}

int pc_cache_dir(const char *run, int create)
{
	int rt = runtime_dir(run);
	if (rt < 0)
		return -1;
	int state = private_dir(rt, PC_STATE, create);
	close(rt);
	if (state < 0)
		return -1;
	int plans = private_dir(state, PC_PLANS, create);
	close(state);
	return plans;
}

int plancache_state_dir(char *buf, size_t n)
{
	int r;
	if (geteuid() == 0)
		r = snprintf(buf, n, "%s/%s", PC_RUN, PC_STATE);
	else
		r = snprintf(buf, n, "%s/%s/%u/%s", PC_RUN, PC_USER, (unsigned)geteuid(), PC_STATE);
	return r < 0 || (size_t)r >= n ? -1 : 0;
}
