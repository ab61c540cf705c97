/* The jail's /proc: a procfs of the jail's own pid namespace, with the files
 * that leak or control the host masked and the control knobs read-only, as
 * runc does. The lists come from proc.go. PID 1 runs it as it builds the
 * root: C, as the whole init stage is (jail/stage.h says why). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "mount/build.h"
#include "mount/sys.h"

/* under opens name below the new procfs, or returns -1 with errno ENOENT
 * when this kernel has no such entry: a mask for a missing file is moot. */
static int under(int proc, const char *name, int dir, struct jerr *e)
{
	int fd = sys_openat2(proc, name, O_PATH | O_CLOEXEC | (dir ? O_DIRECTORY : 0), JAIL_RESOLVE);
	if (fd < 0 && errno != ENOENT)
		jerr_set(e, errno, "proc: open %s", name);
	return fd;
}

static int mask_file(int proc, const char *name, int devnull, struct jerr *e)
{
	int t = under(proc, name, 0, e);
	if (t < 0)
		return errno == ENOENT ? 0 : -1;
	int r = bind_clone(devnull, t, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0, name, e);
	close(t);
	return r;
}

static int mask_dir(int proc, const char *name, struct jerr *e)
{
	int t = under(proc, name, 1, e);
	if (t < 0)
		return errno == ENOENT ? 0 : -1;
	unsigned attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	int m = new_tmpfs(4096, 0555, attrs, name, e);
	int r = m < 0 ? -1 : attach(m, t, name, e);
	if (m >= 0)
		close(m);
	close(t);
	return r;
}

static int read_only(int proc, const char *name, struct jerr *e)
{
	int t = under(proc, name, 0, e);
	if (t < 0)
		return errno == ENOENT ? 0 : -1;
	unsigned attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	int r = bind_clone(t, t, attrs, 1, name, e);
	close(t);
	return r;
}

int proc_build(int root, const char *dst, int devnull, struct wire lists, struct jerr *e)
{
	int fs = sys_fsopen("proc", FSOPEN_CLOEXEC);
	if (fs < 0)
		return jerr_set(e, errno, "proc %s: fsopen", dst);
	int r = sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
	int m = r < 0 ? -1 : sys_fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	int err = errno;
	close(fs);
	if (m < 0)
		return jerr_set(e, err,
				"proc %s: mount a procfs for the jail's pid namespace (a container that masks the host's /proc refuses it)",
				dst);
	int t = target_in(root, dst, 0, e);
	r = t < 0 ? -1 : attach(m, t, dst, e);
	if (t >= 0)
		close(t);

	uint32_t n = wire_u32(&lists);
	for (; r == 0 && n > 0; n--)
		r = mask_file(m, wire_str(&lists), devnull, e);
	n = r == 0 ? wire_u32(&lists) : 0;
	for (; r == 0 && n > 0; n--)
		r = mask_dir(m, wire_str(&lists), e);
	n = r == 0 ? wire_u32(&lists) : 0;
	for (; r == 0 && n > 0; n--)
		r = read_only(m, wire_str(&lists), e);
	if (r == 0 && lists.bad)
		r = jerr_set(e, 0, "proc %s: malformed plan", dst);
	close(m);
	return r;
}
