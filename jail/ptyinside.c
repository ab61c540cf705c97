/* The interactive mode, the jail's side: PID 1 opens a pty in the jail's
 * own devpts once the root is built (mount/dev.c mounts it, ptmxmode
 * 0666), sized as the caller's terminal, and hands its master to the
 * runner, which relays it (pty.c), and its slave to the command's
 * process, which makes it its controlling terminal before anything else
 * (a session of its own, TIOCSCTTY, fds 0-2), while it still may: its
 * seccomp filter comes after. The caller's terminal never enters the
 * jail. PID 1 and the command's process run it before the exec: C, as the
 * whole init stage is (stage.h says why). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal/linux/fdpass.h"
#include "jail/stage.h"

/* ptmx_open opens the jail's /dev/pts/ptmx, through no symlink, and checks
 * it is a devpts's: a profile mounting something else at /dev gets an
 * error, never a pty of the host's. */
static int ptmx_open(struct jerr *e)
{
	struct open_how how = {.flags = O_RDWR | O_NOCTTY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	int m = (int)syscall(SYS_openat2, AT_FDCWD, "/dev/pts/ptmx", &how, sizeof how);
	if (m < 0)
		return jerr_set(e, errno, "tty: open the jail's /dev/pts/ptmx (the interactive mode needs the jail's /dev)");
	struct statfs sf;
	if (fstatfs(m, &sf) < 0 || sf.f_type != DEVPTS_SUPER_MAGIC) {
		close(m);
		return jerr_set(e, 0, "tty: the jail's /dev/pts is not its own devpts (the profile mounts something there)");
	}
	return m;
}

int pty_open(const struct forwarded *f, int go, struct jerr *e)
{
	int unlock = 0, m = ptmx_open(e);
	if (m < 0)
		return -1;
	int s = -1;
	if (ioctl(m, TIOCSPTLCK, &unlock) < 0 || ioctl(m, TIOCSWINSZ, &f->ws) < 0 ||
	    (s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		jerr_set(e, errno, "tty: make the jail's pty");
		close(m);
		return -1;
	}
	/* The master first: the command starts only once it has the slave,
	 * and its first output waits in the pty for the runner. A slave goes
	 * with it, which the runner holds until the jail is over (pty.h). */
	int both[2] = {m, s};
	int r = fd_send(FD_TTY, both, 2) < 0 ? jerr_set(e, errno, "tty: hand the pty to jail") : 0;
	if (r == 0 && fd_send(go, &s, 1) < 0)
		r = jerr_set(e, errno, "tty: hand the pty to the command");
	close(m);
	close(s);
	return r;
}

int pty_take(struct jerr *e)
{
	int s;
	if (setsid() < 0)
		return jerr_set(e, errno, "setsid");
	/* Nothing: PID 1 failed, and says why. */
	if (fd_recv(FD_GO, &s, 1) < 0)
		return -2;
	int r = 0;
	if (ioctl(s, TIOCSCTTY, 0) < 0)
		r = jerr_set(e, errno, "tty: make the jail's pty the command's controlling terminal");
	for (int fd = 0; r == 0 && fd < 3; fd++)
		if (dup2(s, fd) < 0)
			r = jerr_set(e, errno, "tty: the jail's pty as fd %d", fd);
	if (s > 2)
		close(s);
	return r;
}
