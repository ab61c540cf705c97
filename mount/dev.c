/* The jail's minimal /dev: a small read-only tmpfs holding binds of a few
 * harmless host device nodes, a private devpts instance, a /dev/shm tmpfs and
 * the usual symlinks. No disk, no console, no /dev/mem, no host ptys. PID 1
 * runs it as it builds the root: C, as the whole init stage is
 * (jail/stage.h says why). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mount/build.h"
#include "mount/sys.h"

int dev_open(struct wire names, uint32_t n, int *fds, struct jerr *e)
{
	for (uint32_t i = 0; i < n; i++) {
		const char *name = wire_str(&names);
		char path[64];
		if (names.bad || strchr(name, '/') || snprintf(path, sizeof path, "/dev/%s", name) >= (int)sizeof path)
			return jerr_set(e, EINVAL, "dev: bad device name");
		fds[i] = sys_openat2(AT_FDCWD, path, O_PATH | O_CLOEXEC, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		if (fds[i] < 0)
			return jerr_set(e, errno, "dev: open the host's %s", path);
	}
	return 0;
}

/* devpts mounts a new devpts instance: the jail's ptys are its own, and the
 * host's are not reachable through it. */
static int devpts(int dev, const char *dst, struct jerr *e)
{
	char what[PATH_MAX];
	snprintf(what, sizeof what, "%s/pts", dst);
	int fs = sys_fsopen("devpts", FSOPEN_CLOEXEC);
	if (fs < 0)
		return jerr_set(e, errno, "%s: fsopen devpts", what);
	int r = sys_fsconfig(fs, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0);
	if (r == 0)
		r = sys_fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0620", 0);
	/* At most 256 ptys: the host's pool (kernel.pty.max) is shared, and a
	 * jail opening ptmx in a loop would leave none for the next jail's
	 * tty mode, or the host's containers. */
	if (r == 0)
		r = sys_fsconfig(fs, FSCONFIG_SET_STRING, "max", "256", 0);
	if (r == 0)
		r = sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
	int m = r < 0 ? -1 : sys_fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	int err = errno;
	close(fs);
	if (m < 0)
		return jerr_set(e, err, "%s: mount devpts", what);
	int t = target_in(dev, "/pts", 0, e);
	r = t < 0 ? -1 : attach(m, t, what, e);
	if (t >= 0)
		close(t);
	close(m);
	return r;
}

static int shm(int dev, const char *dst, struct jerr *e)
{
	char what[PATH_MAX];
	snprintf(what, sizeof what, "%s/shm", dst);
	int m = new_tmpfs(64 << 20, 01777, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, what, e);
	if (m < 0)
		return -1;
	int t = target_in(dev, "/shm", 0, e);
	int r = t < 0 ? -1 : attach(m, t, what, e);
	if (t >= 0)
		close(t);
	close(m);
	return r;
}

int dev_build(int root, const char *dst, struct wire names, uint32_t n, const int *fds, struct jerr *e)
{
	static const char *const links[][2] = {
		{"fd", "/proc/self/fd"},       {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"},
		{"stderr", "/proc/self/fd/2"}, {"ptmx", "pts/ptmx"},
	};
	/* nodev holds for the tmpfs itself; the device binds below are
	 * mounts of their own. */
	int dev = new_tmpfs(1 << 20, 0755, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, dst, e);
	if (dev < 0)
		return -1;
	int t = target_in(root, dst, 0, e);
	int r = t < 0 ? -1 : attach(dev, t, dst, e);
	if (t >= 0)
		close(t);
	for (uint32_t i = 0; r == 0 && i < n; i++) {
		char path[64];
		snprintf(path, sizeof path, "/%s", wire_str(&names));
		t = target_in(dev, path, 1, e);
		/* Device nodes need a mount without nodev: only these binds. */
		r = t < 0 ? -1 : bind_clone(fds[i], t, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0, path, e);
		if (t >= 0)
			close(t);
	}
	for (size_t i = 0; r == 0 && i < sizeof links / sizeof links[0]; i++)
		if (symlinkat(links[i][1], dev, links[i][0]) < 0)
			r = jerr_set(e, errno, "%s/%s", dst, links[i][0]);
	if (r == 0)
		r = devpts(dev, dst, e);
	if (r == 0)
		r = shm(dev, dst, e);
	if (r == 0) {
		struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
		if (sys_mount_setattr(dev, "", AT_EMPTY_PATH, &ro) < 0)
			r = jerr_set(e, errno, "make %s read-only", dst);
	}
	close(dev);
	return r;
}
