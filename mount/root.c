/* The jail's root filesystem: a fresh tmpfs, the plan's mounts on it, then
 * read-only, pivot_root, and the old root detached. The jail's PID 1 runs
 * it, inside the new user and mount namespaces: C, as the whole init stage
 * is (jail/stage.h says why). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mount/build.h"
#include "mount/mount.h"
#include "mount/sys.h"

/* One op of the mount section, decoded; strings point into the plan. */
struct op {
	uint32_t kind, flags, fdidx, mode;
	uint64_t size;
	const char *src, *dst, *target, *content;
	size_t content_len;
	struct wire lists; /* PROC, DEV: the string lists, read again in pass 2 */
	uint32_t nlist;    /* DEV: how many device names */
	int srcfd;         /* pass 1: the source, O_PATH */
	int *devfds;       /* DEV: the host's device nodes, O_PATH */
};

int open_in(int root, const char *path, int flags, struct jerr *e)
{
	while (*path == '/')
		path++;
	int fd = sys_openat2(root, *path ? path : ".", flags | O_CLOEXEC, JAIL_RESOLVE);
	if (fd < 0)
		return jerr_set(e, errno, "open /%s in the jail", path);
	return fd;
}

int parent_in(int root, const char *path, const char **base, struct jerr *e)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return jerr_set(e, ENAMETOOLONG, "%s", path);
	char *slash = strrchr(buf, '/');
	if (!slash || !slash[1])
		return jerr_set(e, EINVAL, "%s: not an absolute path to a name", path);
	*base = path + (slash - buf) + 1;
	*slash = 0;

	int dir = sys_openat2(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, JAIL_RESOLVE);
	if (dir < 0)
		return jerr_set(e, errno, "open the jail's root");
	for (char *save = NULL, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int next = sys_openat2(dir, c, O_PATH | O_DIRECTORY | O_CLOEXEC, JAIL_RESOLVE);
		if (next < 0 && errno == ENOENT) {
			if (mkdirat(dir, c, 0755) < 0 && errno != EEXIST) {
				int err = errno;
				close(dir);
				return jerr_set(e, err, "create directory %s for %s", c, path);
			}
			next = sys_openat2(dir, c, O_PATH | O_DIRECTORY | O_CLOEXEC, JAIL_RESOLVE);
		}
		int err = errno;
		close(dir);
		if (next < 0)
			return jerr_set(e, err, "%s: directory %s", path, c);
		dir = next;
	}
	return dir;
}

int target_in(int root, const char *path, int is_file, struct jerr *e)
{
	const char *base;
	int dir = parent_in(root, path, &base, e);
	if (dir < 0)
		return -1;
	/* Created without opening: a FIFO or device planted at the path in
	 * a writable bind must not block or act; it is refused below. */
	int r = is_file ? mknodat(dir, base, S_IFREG | 0444, 0) : mkdirat(dir, base, 0755);
	if (r < 0 && errno != EEXIST) {
		int err = errno;
		close(dir);
		return jerr_set(e, err, "create mount point %s", path);
	}
	int fd = sys_openat2(dir, base, O_PATH | O_CLOEXEC | (is_file ? 0 : O_DIRECTORY), JAIL_RESOLVE);
	int err = errno;
	close(dir);
	if (fd < 0)
		return jerr_set(e, err, "open mount point %s", path);
	struct stat st;
	if (is_file && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		return jerr_set(e, 0, "mount point %s: not a regular file", path);
	}
	return fd;
}

/* fs_error adds what the filesystem's context logged to the error. */
static int fs_error(int fs, int err, const char *what, const char *step, struct jerr *e)
{
	char log[256] = "";
	ssize_t n = read(fs, log, sizeof log - 1);
	if (n > 2 && log[1] == ' ') {
		log[n] = 0;
		log[strcspn(log, "\n")] = 0;
		return jerr_set(e, err, "%s: %s (%s)", what, step, log + 2);
	}
	return jerr_set(e, err, "%s: %s", what, step);
}

int new_tmpfs(uint64_t size, uint32_t mode, unsigned attrs, const char *what, struct jerr *e)
{
	int fs = sys_fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return jerr_set(e, errno, "%s: fsopen tmpfs", what);
	char val[32];
	int r = 0;
	if (size) {
		snprintf(val, sizeof val, "%" PRIu64, size);
		r = sys_fsconfig(fs, FSCONFIG_SET_STRING, "size", val, 0);
	}
	if (r == 0) {
		snprintf(val, sizeof val, "%o", mode);
		r = sys_fsconfig(fs, FSCONFIG_SET_STRING, "mode", val, 0);
	}
	if (r == 0)
		r = sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
	if (r < 0) {
		fs_error(fs, errno, what, "configure tmpfs", e);
		close(fs);
		return -1;
	}
	int m = sys_fsmount(fs, FSMOUNT_CLOEXEC, attrs);
	int err = errno;
	close(fs);
	if (m < 0)
		return jerr_set(e, err, "%s: fsmount tmpfs", what);
	return m;
}

int attach(int tree, int target, const char *what, struct jerr *e)
{
	if (sys_move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return jerr_set(e, errno, "mount %s", what);
	return 0;
}

int bind_clone(int src, int target, unsigned attrs, int recursive, const char *what, struct jerr *e)
{
	unsigned rec = recursive ? AT_RECURSIVE : 0;
	int tree = sys_open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | rec);
	if (tree < 0)
		return jerr_set(e, errno, "bind %s: clone the source", what);
	struct mount_attr attr = {.attr_set = attrs};
	if (attrs && sys_mount_setattr(tree, "", AT_EMPTY_PATH | rec, &attr) < 0) {
		int err = errno;
		close(tree);
		return jerr_set(e, err, "bind %s: set mount attributes", what);
	}
	int r = attach(tree, target, what, e);
	close(tree);
	return r;
}

/* decode reads the ops of the section; strings stay in the plan. */
static struct op *decode(struct wire *w, uint32_t *nops, uint64_t *root_size, struct jerr *e)
{
	*root_size = wire_u64(w);
	*nops = wire_u32(w);
	if (w->bad || *nops > 100000) {
		jerr_set(e, 0, "mount plan: malformed header");
		return NULL;
	}
	struct op *ops = calloc(*nops ? *nops : 1, sizeof *ops);
	if (!ops) {
		jerr_set(e, ENOMEM, "mount plan");
		return NULL;
	}
	for (uint32_t i = 0; i < *nops && !w->bad; i++) {
		struct op *o = &ops[i];
		o->srcfd = -1;
		o->kind = wire_u32(w);
		switch (o->kind) {
		case MOP_BIND:
			o->flags = wire_u32(w);
			o->src = wire_str(w);
			o->fdidx = wire_u32(w);
			o->dst = wire_str(w);
			break;
		case MOP_TMPFS:
			o->size = wire_u64(w);
			o->mode = wire_u32(w);
			o->dst = wire_str(w);
			break;
		case MOP_PROC:
			o->dst = wire_str(w);
			o->lists = *w;
			for (int l = 0; l < 3; l++)
				for (uint32_t n = wire_u32(w); n > 0 && !w->bad; n--)
					wire_str(w);
			break;
		case MOP_DEV:
			o->dst = wire_str(w);
			o->nlist = wire_u32(w);
			o->lists = *w;
			for (uint32_t n = 0; n < o->nlist && !w->bad; n++)
				wire_str(w);
			break;
		case MOP_SYMLINK:
			o->target = wire_str(w);
			o->dst = wire_str(w);
			break;
		case MOP_DIR:
			o->mode = wire_u32(w);
			o->dst = wire_str(w);
			break;
		case MOP_FILE:
		case MOP_FILE_OVER:
			o->mode = wire_u32(w);
			o->content = wire_bytes(w, &o->content_len);
			o->dst = wire_str(w);
			break;
		default:
			w->bad = 1;
		}
	}
	if (w->bad) {
		free(ops);
		jerr_set(e, 0, "mount plan: malformed op");
		return NULL;
	}
	return ops;
}

/* open_sources is pass 1: every host path the plan names is opened now,
 * before the new root is attached anywhere. Sources were made canonical by
 * the parent, so a symlink met here was planted after planning: refuse it. */
static int open_sources(struct op *ops, uint32_t nops, int fd_base, int nfds, int *devnull, struct jerr *e)
{
	for (uint32_t i = 0; i < nops; i++) {
		struct op *o = &ops[i];
		if (o->kind == MOP_BIND && (o->flags & MBIND_FD)) {
			if (o->fdidx >= (uint32_t)nfds)
				return jerr_set(e, EBADF, "bind %s: no tree from the parent", o->dst);
			o->srcfd = fd_base + (int)o->fdidx;
		} else if (o->kind == MOP_BIND) {
			o->srcfd = sys_openat2(AT_FDCWD, o->src, O_PATH | O_CLOEXEC, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
			if (o->srcfd < 0)
				return jerr_set(e, errno, "bind %s on %s: open the source", o->src, o->dst);
			/* Planned as the jail's own; what is open now must be (a
			 * directory swapped in since would be another's). */
			struct stat st;
			if ((o->flags & MBIND_OWN) &&
			    (fstat(o->srcfd, &st) < 0 || st.st_uid != geteuid() || st.st_gid != getegid()))
				return jerr_set(e, 0, "bind %s on %s: no longer the jail's own ids' since it was planned (replaced meanwhile?)",
						o->src, o->dst);
		} else if (o->kind == MOP_DEV) {
			o->devfds = calloc(o->nlist ? o->nlist : 1, sizeof *o->devfds);
			if (!o->devfds)
				return jerr_set(e, ENOMEM, "dev %s", o->dst);
			if (dev_open(o->lists, o->nlist, o->devfds, e) < 0)
				return -1;
		} else if (o->kind == MOP_PROC && *devnull < 0) {
			*devnull = sys_openat2(AT_FDCWD, "/dev/null", O_PATH | O_CLOEXEC, RESOLVE_NO_SYMLINKS);
			if (*devnull < 0)
				return jerr_set(e, errno, "proc %s: open /dev/null to mask with", o->dst);
		}
	}
	return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* make_file creates a plan's file with its content on the jail's root. */
static int make_file(int root, const struct op *o, struct jerr *e)
{
	const char *base;
	int dir = parent_in(root, o->dst, &base, e);
	if (dir < 0)
		return -1;
	int fd = openat(dir, base, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, o->mode);
	int err = errno;
	close(dir);
	if (fd < 0)
		return jerr_set(e, err, "file %s", o->dst);
	if (write_all(fd, o->content, o->content_len) < 0 || fchmod(fd, o->mode) < 0) {
		err = errno;
		close(fd);
		return jerr_set(e, err, "file %s: write", o->dst);
	}
	close(fd);
	return 0;
}

/* COVER_STAGE is where cover_file writes a file's content, on the jail's
 * root tmpfs, for the moments until it is mounted; a plan that puts
 * something there itself fails the run (O_EXCL). */
#define COVER_STAGE ".jail-cover"

/* cover_file mounts a plan's file, read-only, over the regular file an
 * earlier op put at dst (a file inside a read-only bind, where make_file
 * cannot create one). The content is written to a file on the jail's root
 * tmpfs, which the plan sized for it; a clone of that file is mounted at
 * dst and its name removed at once, on success or failure: the jail's
 * command is not running yet, and sees only the mount at dst. Not an
 * unnamed file (O_TMPFILE): the kernel refuses to mount a clone of one
 * (ENOENT). Not a detached tmpfs of its own (fsmount): older kernels
 * refuse to clone a path of a mount that is in no namespace, while the
 * root tmpfs is attached in this one already; and a superblock fewer is
 * cheaper. */
static int cover_file(int root, const struct op *o, struct jerr *e)
{
	const char *rel = o->dst;
	while (*rel == '/')
		rel++;
	/* Found, never created, below the root without a symlink: what the
	 * jail will see at dst, through whatever mounts lead there. */
	int t = sys_openat2(root, rel, O_PATH | O_CLOEXEC, JAIL_RESOLVE);
	if (t < 0) {
		if (errno == ENOENT)
			return jerr_set(e, 0, "file %s: nothing there to cover", o->dst);
		if (errno == ELOOP)
			return jerr_set(e, 0, "file %s: a symlink in the jail leads there; cover the path it leads to", o->dst);
		return jerr_set(e, errno, "file %s: open the file to cover", o->dst);
	}
	struct stat st;
	if (fstat(t, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(t);
		return jerr_set(e, 0, "file %s: nothing there to cover (not a regular file)", o->dst);
	}
	int fd = openat(root, COVER_STAGE, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, o->mode);
	if (fd < 0) {
		int err = errno;
		close(t);
		return jerr_set(e, err, "file %s: create its content as /%s", o->dst, COVER_STAGE);
	}
	int tree = -1, r = -1;
	if (write_all(fd, o->content, o->content_len) < 0 || fchmod(fd, o->mode) < 0) {
		jerr_set(e, errno, "file %s: write", o->dst);
		goto out;
	}
	tree = sys_open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0) {
		jerr_set(e, errno, "file %s: clone its content", o->dst);
		goto out;
	}
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
	};
	if (sys_mount_setattr(tree, "", AT_EMPTY_PATH, &attr) < 0) {
		jerr_set(e, errno, "file %s: make it read-only", o->dst);
		goto out;
	}
	r = attach(tree, t, o->dst, e);
out:
	if (tree >= 0)
		close(tree);
	close(fd);
	close(t);
	/* The mount holds the file; the name must not stay for the jail. */
	if (unlinkat(root, COVER_STAGE, 0) < 0 && r == 0)
		r = jerr_set(e, errno, "file %s: remove /%s", o->dst, COVER_STAGE);
	return r;
}

static int make_dir(int root, const struct op *o, struct jerr *e)
{
	const char *base;
	int dir = parent_in(root, o->dst, &base, e);
	if (dir < 0)
		return -1;
	int r = mkdirat(dir, base, o->mode);
	if (r == 0 || errno == EEXIST) {
		int fd = sys_openat2(dir, base, O_RDONLY | O_DIRECTORY | O_CLOEXEC, JAIL_RESOLVE);
		r = fd < 0 ? -1 : fchmod(fd, o->mode);
		if (fd >= 0)
			close(fd);
	}
	int err = errno;
	close(dir);
	return r < 0 ? jerr_set(e, err, "dir %s", o->dst) : 0;
}

static int make_symlink(int root, const struct op *o, struct jerr *e)
{
	const char *base;
	int dir = parent_in(root, o->dst, &base, e);
	if (dir < 0)
		return -1;
	int r = symlinkat(o->target, dir, base);
	int err = errno;
	close(dir);
	return r < 0 ? jerr_set(e, err, "symlink %s -> %s", o->dst, o->target) : 0;
}

/* apply is pass 2: one op onto the attached root. */
static int apply(int root, const struct op *o, int devnull, struct jerr *e)
{
	int t, r;
	switch (o->kind) {
	case MOP_BIND:
		t = target_in(root, o->dst, o->flags & MBIND_FILE, e);
		if (t < 0)
			return -1;
		if (o->flags & MBIND_FD) {
			/* The parent cloned the tree and set its attributes,
			 * an idmap among them: only attach it. */
			r = attach(o->srcfd, t, o->dst, e);
		} else {
			/* nosuid and nodev on every bind; read-only binds are
			 * read-only all the way down (AT_RECURSIVE). */
			unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
			if (o->flags & MBIND_RO)
				attrs |= MOUNT_ATTR_RDONLY;
			r = bind_clone(o->srcfd, t, attrs, 1, o->dst, e);
		}
		close(t);
		return r;
	case MOP_TMPFS: {
		int m = new_tmpfs(o->size, o->mode, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, o->dst, e);
		if (m < 0)
			return -1;
		t = target_in(root, o->dst, 0, e);
		r = t < 0 ? -1 : attach(m, t, o->dst, e);
		if (t >= 0)
			close(t);
		close(m);
		return r;
	}
	case MOP_PROC:
		return proc_build(root, o->dst, devnull, o->lists, e);
	case MOP_DEV:
		return dev_build(root, o->dst, o->lists, o->nlist, o->devfds, e);
	case MOP_SYMLINK:
		return make_symlink(root, o, e);
	case MOP_DIR:
		return make_dir(root, o, e);
	case MOP_FILE:
		return make_file(root, o, e);
	case MOP_FILE_OVER:
		return cover_file(root, o, e);
	}
	return jerr_set(e, EINVAL, "mount op %u", o->kind);
}

/* pivot makes root the process's root and detaches the old one entirely, so
 * no path, fd or mount of the host stays reachable. */
static int pivot(int root, struct jerr *e)
{
	struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
	if (sys_mount_setattr(root, "", AT_EMPTY_PATH, &ro) < 0)
		return jerr_set(e, errno, "make the jail's root read-only");
	if (fchdir(root) < 0)
		return jerr_set(e, errno, "chdir to the jail's root");
	if (sys_pivot_root(".", ".") < 0)
		return jerr_set(e, errno, "pivot_root");
	/* The old root is now stacked on "."; keep our unmount from
	 * propagating anywhere, then detach it. */
	if (sys_mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		return jerr_set(e, errno, "make the old root a slave");
	if (sys_umount2(".", MNT_DETACH) < 0)
		return jerr_set(e, errno, "detach the old root");
	if (chdir("/") < 0)
		return jerr_set(e, errno, "chdir /");
	return 0;
}

int jail_mount_build(struct wire *section, int fd_base, int nfds, struct jerr *e)
{
	uint32_t nops;
	uint64_t root_size;
	struct op *ops = decode(section, &nops, &root_size, e);
	if (!ops)
		return -1;
	int devnull = -1, root = -1, r = -1;

	/* Nothing we mount may propagate back to the host. */
	if (sys_mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		jerr_set(e, errno, "make / private");
		goto out;
	}
	if (open_sources(ops, nops, fd_base, nfds, &devnull, e) < 0)
		goto out;
	root = new_tmpfs(root_size, 0755, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "the jail's root", e);
	if (root < 0)
		goto out;
	/* Attached on top of the old root: pivot_root needs a mount point,
	 * and every host path is already open. */
	if (sys_move_mount(root, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		jerr_set(e, errno, "attach the jail's root");
		goto out;
	}
	for (uint32_t i = 0; i < nops; i++)
		if (apply(root, &ops[i], devnull, e) < 0)
			goto out;
	r = pivot(root, e);
out:
	for (uint32_t i = 0; i < nops; i++) {
		if (ops[i].srcfd >= 0 && !(ops[i].flags & MBIND_FD))
			close(ops[i].srcfd);
		if (ops[i].devfds) {
			for (uint32_t d = 0; d < ops[i].nlist; d++)
				if (ops[i].devfds[d] > 0)
					close(ops[i].devfds[d]);
			free(ops[i].devfds);
		}
	}
	if (devnull >= 0)
		close(devnull);
	if (root >= 0)
		close(root);
	free(ops);
	return r;
}
