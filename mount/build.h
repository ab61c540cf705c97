/* Helpers shared by the C files of the mount package (root.c, dev.c,
 * proc.c); not part of its interface to the init stage. */
#ifndef JAIL_MOUNT_BUILD_H
#define JAIL_MOUNT_BUILD_H

#include <stdint.h>
#include <sys/types.h>

#include "internal/wire/err.h"
#include "internal/wire/wire.h"

#ifndef MNT_DETACH
#define MNT_DETACH 2
#endif

/* Every path inside the jail is resolved below its root with these: no
 * symlink, no magic link, no "..", so nothing the jailed side planted in a
 * writable mount can redirect a mount (runc CVE-2021-30465). */
#define JAIL_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* open_in opens path (absolute inside the jail) below root. */
int open_in(int root, const char *path, int flags, struct jerr *e);

/* parent_in returns an O_PATH fd of the directory holding path, creating
 * missing directories (0755) on the way, and points *base at the last
 * component. */
int parent_in(int root, const char *path, const char **base, struct jerr *e);

/* target_in creates the mount point path (a directory, or an empty file when
 * is_file) below root if it is missing and returns an O_PATH fd of it. */
int target_in(int root, const char *path, int is_file, struct jerr *e);

/* new_tmpfs makes a detached tmpfs mount; what names it in errors. */
int new_tmpfs(uint64_t size, uint32_t mode, unsigned attrs, const char *what, struct jerr *e);

/* attach moves the detached mount tree onto the mount point fd target. */
int attach(int tree, int target, const char *what, struct jerr *e);

/* bind_clone clones the mount at src (an fd), sets attrs on the clone and
 * attaches it at target. */
int bind_clone(int src, int target, unsigned attrs, int recursive, const char *what, struct jerr *e);

/* dev_open and dev_build: the minimal /dev. dev_open runs before the new
 * root is attached, while the host's /dev is still in reach. */
int dev_open(struct wire names, uint32_t n, int *fds, struct jerr *e);
int dev_build(int root, const char *dst, struct wire names, uint32_t n, const int *fds, struct jerr *e);

/* proc_build mounts the jail's procfs at dst and masks what leaks or
 * controls the host. devnull is an O_PATH fd of the host's /dev/null. */
int proc_build(int root, const char *dst, int devnull, struct wire lists, struct jerr *e);

#endif
