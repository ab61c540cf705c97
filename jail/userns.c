/* User namespaces, on the runner's side: the id maps of the jail's own, and
 * those a root caller's writable binds are idmapped through, each mapping
 * a bind's owner to the jail's unprivileged host ids. A user namespace
 * lives only as long as something holds it, so a throw-away child holds
 * one while the runner opens it. C, before the Go runtime, as the whole
 * runner is (runner.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal/linux/file.h"
#include "jail/json.h"
#include "jail/userns.h"
#include "mount/mount.h"

/* write_map writes /proc/PID/NAME (uid_map, gid_map): one id, inside to
 * outside. */
static int write_map(pid_t pid, const char *name, unsigned inside, unsigned outside)
{
	char path[64], map[64];
	snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
	snprintf(map, sizeof map, "%u %u 1\n", inside, outside);
	return file_put(path, map);
}

int userns_write_maps(pid_t pid, const struct run_plan *p, struct jerr *e)
{
	unsigned host_uid = p->flags & RUN_ROOT ? p->host_uid : (unsigned)geteuid();
	unsigned host_gid = p->flags & RUN_ROOT ? p->host_gid : (unsigned)getegid();
	if (!(p->flags & RUN_ROOT)) {
		/* An unprivileged gid map needs setgroups denied for good. */
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/setgroups", pid);
		if (file_put(path, "deny") < 0)
			return jerr_set(e, errno, "write the jail's setgroups");
	}
	if (write_map(pid, "uid_map", p->uid, host_uid) < 0)
		return jerr_set(e, errno, "write the jail's uid_map");
	if (write_map(pid, "gid_map", p->gid, host_gid) < 0)
		return jerr_set(e, errno, "write the jail's gid_map");
	return 0;
}

/* idmap_userns returns a user namespace mapping a bind's owner to the
 * jail's host ids, to idmap the bind through. */
static int idmap_userns(unsigned owner_uid, unsigned owner_gid, unsigned host_uid, unsigned host_gid, struct jerr *e)
{
	int hold[2];
	if (pipe2(hold, O_CLOEXEC) < 0)
		return jerr_set(e, errno, "idmap user namespace: pipe");
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0) {
		char c;
		close(hold[1]);
		while (read(hold[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(hold[0]);
	if (pid < 0) {
		close(hold[1]);
		return jerr_set(e, errno, "idmap user namespace: clone");
	}
	int fd = -1, err = 0;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/user", pid);
	if (write_map(pid, "uid_map", owner_uid, host_uid) < 0 || write_map(pid, "gid_map", owner_gid, host_gid) < 0 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		err = errno;
	close(hold[1]); /* the holder sees EOF and goes */
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (fd < 0)
		return jerr_set(e, err, "idmap user namespace for uid %u", owner_uid);
	return fd;
}

int userns_clone_trees(const struct run_plan *p, int *fds, struct jerr *e)
{
	for (uint32_t i = 0; i < p->ntrees; i++) {
		const struct run_tree *t = &p->trees[i];
		int userns = -1;
		if (t->flags & TREE_IDMAP) {
			userns = idmap_userns(t->owner_uid, t->owner_gid, p->host_uid, p->host_gid, e);
			if (userns < 0)
				return -1;
		}
		struct tree_owner owner = {t->owner_uid, t->owner_gid};
		fds[i] = mount_clone_tree(t->path, t->flags & TREE_RO, userns, (t->flags & TREE_IDMAP) ? &owner : NULL, e);
		if (userns >= 0)
			close(userns);
		if (fds[i] < 0)
			return -1;
	}
	return 0;
}

void userns_record(FILE *f, const struct run_plan *p)
{
	int root = (p->flags & RUN_ROOT) != 0, admin = root && !(p->flags & RUN_NO_ADMIN);
	unsigned uid = root ? p->host_uid : (unsigned)geteuid(), gid = root ? p->host_gid : (unsigned)getegid();
	char why[256];
	if (admin)
		snprintf(why, sizeof why,
			 "the caller is root with CAP_SYS_ADMIN: jail cloned the jail's binds for it, the writable ones idmapped to their owners");
	else if (root)
		snprintf(why, sizeof why,
			 "the caller is root without CAP_SYS_ADMIN (a container's root, as a rule): the jail is built as uid %u's own would be, "
			 "opening its binds as it; nothing is idmapped",
			 uid);
	else
		snprintf(why, sizeof why, "the caller is not root: the jail maps just the caller");
	fprintf(f, "\"userns\":{\"host_uid\":%u,\"host_gid\":%u,\"path\":\"%s\",\"why\":", uid, gid,
		admin ? "root" : "unprivileged");
	json_str(f, why);
	fputs("},", f);
}
