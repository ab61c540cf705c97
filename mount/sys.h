/* Thin wrappers for the mount API syscalls, which glibc 2.36 wraps only in a
 * <sys/mount.h> that clashes with <linux/mount.h>. */
#ifndef JAIL_MOUNT_SYS_H
#define JAIL_MOUNT_SYS_H

#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

static inline int sys_open_tree(int dfd, const char *path, unsigned flags)
{
	return (int)syscall(SYS_open_tree, dfd, path, flags);
}

static inline int sys_move_mount(int from_dfd, const char *from, int to_dfd, const char *to, unsigned flags)
{
	return (int)syscall(SYS_move_mount, from_dfd, from, to_dfd, to, flags);
}

static inline int sys_fsopen(const char *fs, unsigned flags)
{
	return (int)syscall(SYS_fsopen, fs, flags);
}

static inline int sys_fsconfig(int fd, unsigned cmd, const char *key, const void *val, int aux)
{
	return (int)syscall(SYS_fsconfig, fd, cmd, key, val, aux);
}

static inline int sys_fsmount(int fd, unsigned flags, unsigned attrs)
{
	return (int)syscall(SYS_fsmount, fd, flags, attrs);
}

static inline int sys_mount_setattr(int dfd, const char *path, unsigned flags, struct mount_attr *attr)
{
	return (int)syscall(SYS_mount_setattr, dfd, path, flags, attr, sizeof *attr);
}

static inline int sys_openat2(int dfd, const char *path, int flags, unsigned long long resolve)
{
	struct open_how how = {.flags = (unsigned long long)flags, .resolve = resolve};
	return (int)syscall(SYS_openat2, dfd, path, &how, sizeof how);
}

static inline int sys_pivot_root(const char *new_root, const char *put_old)
{
	return (int)syscall(SYS_pivot_root, new_root, put_old);
}

static inline int sys_umount2(const char *target, int flags)
{
	return (int)syscall(SYS_umount2, target, flags);
}

static inline int sys_mount(const char *src, const char *dst, const char *type, unsigned long flags, const void *data)
{
	return (int)syscall(SYS_mount, src, dst, type, flags, data);
}

#endif
