/* The init stage's side of the mount package: carry out the mount section of
 * the plan that mount/plan.go wrote, then pivot into the new root. */
#ifndef JAIL_MOUNT_H
#define JAIL_MOUNT_H

#include "internal/wire/err.h"
#include "internal/wire/wire.h"

/* Ops of the mount section, in the order plan.go writes their fields. */
enum {
	MOP_BIND = 1,  /* u32 flags, str src, u32 fd index, str dst */
	MOP_TMPFS,     /* u64 size, u32 mode, str dst */
	MOP_PROC,      /* str dst, strs masked files, strs masked dirs, strs read-only paths */
	MOP_DEV,       /* str dst, strs device names */
	MOP_SYMLINK,   /* str target, str dst */
	MOP_DIR,       /* u32 mode, str dst */
	MOP_FILE,      /* u32 mode, bytes content, str dst */
	MOP_FILE_OVER, /* u32 mode, bytes content, str dst: read-only, over the file at dst */
};

/* Flags of MOP_BIND. */
#define MBIND_RO 1   /* recursively read-only */
#define MBIND_FILE 2 /* the source is not a directory */
#define MBIND_FD 4   /* the parent made the tree: it is at fd index, attributes set */
#define MBIND_OWN 8  /* writable, and must be the jail's own ids' (no idmap: root without CAP_SYS_ADMIN), checked again once opened */

/* jail_mount_build builds the jail's root on a fresh tmpfs from the mount
 * section (u64 root size, u32 op count, the ops), makes it read-only, and
 * pivots into it, detaching the old root. Trees the parent made are at fds
 * fd_base.. fd_base+nfds-1. The caller's working directory is / afterwards. */
int jail_mount_build(struct wire *section, int fd_base, int nfds, struct jerr *e);

/* mount_clone_tree clones the mount tree at path (resolved already, so no
 * symlink is followed) as a private, nosuid, nodev detached tree,
 * recursively read-only when ro, idmapped through userns when that is not
 * -1. It returns the tree's fd. With owner (an idmapped tree), the
 * source must still be owner's once opened: the idmap maps owner's ids,
 * and another's directory swapped in since would be written as owner's. */
struct tree_owner {
	unsigned uid, gid;
};
int mount_clone_tree(const char *path, int ro, int userns, const struct tree_owner *owner, struct jerr *e);

#endif
