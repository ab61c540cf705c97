/* Opening a host path the runner writes for its caller (the status record),
 * which may lie in a directory the jail can write: only symbolic links root
 * owns are followed on the way, and the file itself is never a link. A link
 * a jail planted is owned by the jail's host uid or by a writable bind's
 * owner, never root, so it cannot send the record elsewhere: not a root
 * caller's write anywhere root can write, nor an unprivileged caller's
 * into another of its directories. Bind sources follow the same rule. The
 * runner runs it: C, before the Go runtime, as the whole runner is
 * (runner.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jail/hostfile.h"

/* How many links one path may go through, as the kernel's own limit. */
#define MAX_LINKS 40

/* step replaces the first len bytes of rest (name, a component that is not
 * a directory) with its target when it is a link root owns: rest becomes
 * target "/" what followed. The link is opened once, and its owner and
 * target read from that one open: it cannot be swapped in between. */
static int step(int dir, const char *name, char *rest, size_t len, size_t size)
{
	struct stat st;
	int link = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (link < 0)
		return -1;
	char target[PATH_MAX];
	ssize_t n = -1;
	if (fstat(link, &st) < 0)
		goto out;
	if (!S_ISLNK(st.st_mode)) {
		errno = ENOTDIR;
		goto out;
	}
	if (st.st_uid != 0) {
		errno = ELOOP; /* a link root does not own: not followed */
		goto out;
	}
	n = readlinkat(link, "", target, sizeof target - 1);
out:;
	int err = errno;
	close(link);
	errno = err;
	if (n <= 0)
		return -1;
	size_t tail = strlen(rest + len);
	if ((size_t)n + 1 + tail + 1 > size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memmove(rest + n + 1, rest + len, tail + 1);
	memcpy(rest, target, (size_t)n);
	rest[n] = '/';
	return 0;
}

int hostfile_open(const char *path, int flags, mode_t mode)
{
	char rest[2 * PATH_MAX];
	if (!*path || strlen(path) >= PATH_MAX) {
		errno = *path ? ENAMETOOLONG : ENOENT;
		return -1;
	}
	strcpy(rest, path);
	int dir = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (int links = 0; dir >= 0;) {
		if (rest[0] == '/') {
			/* An absolute path, or a link's absolute target: from
			 * the root again. */
			close(dir);
			if ((dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
				return -1;
			size_t slashes = strspn(rest, "/");
			memmove(rest, rest + slashes, strlen(rest + slashes) + 1);
		}
		size_t len = strcspn(rest, "/");
		if (len == 0) {
			close(dir);
			errno = EISDIR;
			return -1;
		}
		char name[NAME_MAX + 1];
		if (len > NAME_MAX) {
			close(dir);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(name, rest, len);
		name[len] = 0;
		if (rest[len] == 0) {
			/* The file itself: never through a link. */
			int fd = openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
			int err = errno;
			close(dir);
			errno = err;
			return fd;
		}
		int next = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next >= 0) {
			close(dir);
			dir = next;
			/* On past the component and its slashes: what is left
			 * is relative to dir. */
			len += strspn(rest + len, "/");
			memmove(rest, rest + len, strlen(rest + len) + 1);
			continue;
		}
		/* Not a directory: a link to follow, if it is root's, else
		 * the end. */
		if ((errno != ENOTDIR && errno != ELOOP) || ++links > MAX_LINKS ||
		    step(dir, name, rest, len, sizeof rest) < 0) {
			if (links > MAX_LINKS)
				errno = ELOOP;
			int err = errno;
			close(dir);
			errno = err;
			return -1;
		}
		/* A relative target goes on from the link's directory, dir;
		 * an absolute one from the root, above. */
	}
	return -1;
}
