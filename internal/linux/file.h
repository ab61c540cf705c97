/* Small files of the kernel's interfaces (cgroupfs, /proc), written and
 * read whole: the runner's cgroup (cgroup/cg.c), its user namespaces'
 * id maps (jail/userns.c), the init stage's own /proc/self/stat
 * (jail/stagestart.c). C, as all run before the Go runtime;
 * header-only, so the C of each package that includes it links its own
 * copy. */
#ifndef JAIL_LINUX_FILE_H
#define JAIL_LINUX_FILE_H

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* file_put writes s to the file at path in one write (such files take one
 * value a write); 0, or -1 with errno. */
static inline int file_put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = strlen(s);
	ssize_t n = write(fd, s, len);
	int err = errno;
	close(fd);
	errno = err;
	return n == (ssize_t)len ? 0 : -1;
}

/* file_get reads the file at path into buf, NUL-terminated (what does not
 * fit is left out); the bytes read, or -1 (errno) with buf empty. */
static inline ssize_t file_get(const char *path, char *buf, size_t size)
{
	if (size == 0) {
		errno = EINVAL;
		return -1;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		buf[0] = 0;
		return -1;
	}
	ssize_t n = read(fd, buf, size - 1);
	int err = errno;
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	errno = err;
	return n;
}

#endif
