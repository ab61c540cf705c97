/* The bind trees a root caller's jail gets from its runner: the jail runs
 * as an unprivileged host uid that may not reach a source, so the runner,
 * still root, clones each source tree with the jail's attributes and hands
 * it over as an fd (MBIND_FD). C, before the Go runtime, as the whole
 * runner is (jail/runner.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>

#include "mount/mount.h"
#include "mount/sys.h"

int mount_clone_tree(const char *path, int ro, int userns, struct jerr *e)
{
	/* The planner resolved the path; a symlink here was planted since. */
	int src = sys_openat2(AT_FDCWD, path, O_PATH | O_CLOEXEC, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (src < 0)
		return jerr_set(e, errno, "bind %s: open the source", path);
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
			close(tree);
			return jerr_set(e, err,
					"bind %s: idmap the writable bind so files stay its owner's (the filesystem must support idmapped mounts)",
					path);
		}
	}
	return tree;
}
