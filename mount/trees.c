/* The bind trees a root caller's jail gets from its runner: the jail runs
 * as an unprivileged host uid that may not reach a source, so the runner,
 * still root, clones each source tree with the jail's attributes and hands
 * it over as an fd (MBIND_FD). C, before the Go runtime, as the whole
 * runner is (jail/runner.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "mount/mount.h"
#include "mount/sys.h"

/* fs_name names the filesystem fd is on, for a message: the common ones
 * by name, any other by its magic number (statfs(2)). */
static void fs_name(int fd, char *out, size_t n)
{
	static const struct {
		long magic;
		const char *name;
	} known[] = {
		{0x794c7630, "overlayfs"}, {0x01021994, "tmpfs"}, {0xef53, "ext4"},     {0x58465342, "xfs"},
		{0x9123683e, "btrfs"},     {0x6969, "nfs"},       {0x65735546, "fuse"}, {0x01021997, "9p"},
		{0x2fc12fc1, "zfs"},       {0xff534d42, "cifs"},  {0xfe534d42, "smb2"}, {0x73717368, "squashfs"},
		{0x61756673, "aufs"},      {0x00c36400, "ceph"},  {0x4d44, "vfat"},
	};
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0) {
		snprintf(out, n, "a filesystem");
		return;
	}
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if ((long)sf.f_type == known[i].magic) {
			snprintf(out, n, "%s", known[i].name);
			return;
		}
	snprintf(out, n, "a filesystem of type %#lx", (long)sf.f_type);
}

/* idmap_error says why a writable bind could not be idmapped, and the fix:
 * EINVAL is a filesystem without idmapped mounts (overlayfs, a container's
 * own root, above all), EPERM a root without CAP_SYS_ADMIN over the
 * filesystem (root in a user namespace of its own: rootless, userns-remap). */
static int idmap_error(int tree, const char *path, int err, struct jerr *e)
{
	char fs[64];
	fs_name(tree, fs, sizeof fs);
	if (err == EINVAL)
		return jerr_set(e, 0,
				"bind %s: it is on %s%s, which cannot be idmapped, and jail as root idmaps a writable bind so that what the "
				"jail writes there is its owner's; fix: put it on a filesystem that can (a volume of the host's ext4, xfs or "
				"btrfs: docker run -v HOSTDIR:%s; or a tmpfs: --tmpfs %s), or run jail as a non-root user",
				path, fs, strcmp(fs, "overlayfs") ? "" : " (a container's own root filesystem, as a rule)", path, path);
	if (err == EPERM)
		return jerr_set(e, 0,
				"bind %s: idmapping it (on %s) needs CAP_SYS_ADMIN over its filesystem, which root in a user namespace of its "
				"own (a rootless or userns-remapped container) has not; fix: run jail as a non-root user",
				path, fs);
	return jerr_set(e, err, "bind %s: idmap the writable bind so files stay its owner's (the filesystem must support idmapped mounts)",
			path);
}

int mount_clone_tree(const char *path, int ro, int userns, const struct tree_owner *owner, struct jerr *e)
{
	/* The planner resolved the path; a symlink here was planted since. */
	int src = sys_openat2(AT_FDCWD, path, O_PATH | O_CLOEXEC, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (src < 0)
		return jerr_set(e, errno, "bind %s: open the source", path);
	struct stat st;
	if (owner && (fstat(src, &st) < 0 || st.st_uid != owner->uid || st.st_gid != owner->gid)) {
		close(src);
		return jerr_set(e, 0, "bind %s: no longer owned by %u:%u, as it was planned (replaced meanwhile?)", path, owner->uid,
				owner->gid);
	}
	int tree = sys_open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	int err = errno;
	close(src);
	if (tree < 0)
		return jerr_set(e, err, "bind %s: clone the source tree", path);
	/* Private: nothing mounted under the clone reaches the host, nor the
	 * other way round (systemd makes every host mount shared). */
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (ro ? MOUNT_ATTR_RDONLY : 0),
		.propagation = MS_PRIVATE,
	};
	if (sys_mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr) < 0) {
		err = errno;
		close(tree);
		return jerr_set(e, err, "bind %s: set mount attributes", path);
	}
	if (userns >= 0) {
		struct mount_attr idmap = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (unsigned)userns};
		if (sys_mount_setattr(tree, "", AT_EMPTY_PATH, &idmap) < 0) {
			err = errno;
			idmap_error(tree, path, err, e);
			close(tree);
			return -1;
		}
	}
	return tree;
}
