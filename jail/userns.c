/* The user namespaces a root caller's writable binds are idmapped through:
 * each maps a bind's owner to the jail's unprivileged host ids. A user
 * namespace lives only as long as something holds it, so a throw-away
 * child holds it while the runner opens it. */
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
#include "jail/stage.h"

static int write_map(pid_t pid, const char *name, unsigned inside, unsigned outside)
{
	char path[64], map[64];
	snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
	snprintf(map, sizeof map, "%u %u 1\n", inside, outside);
	return file_put(path, map);
}

int idmap_userns(unsigned owner_uid, unsigned owner_gid, unsigned host_uid, unsigned host_gid, struct jerr *e)
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
