/* Writing to the caller's ends without ever blocking jail for long: the
 * output relay (relay.c), jail's own line on stderr and the status record
 * (report.c). The runner runs this: C, before the Go runtime, as the whole
 * runner is (runner.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <unistd.h>

#include "jail/callerfd.h"
#include "jail/monotonic.h"

/* on_alarm only interrupts: a write that would block past its time
 * returns (SA_RESTART is not set). */
static void on_alarm(int sig) { (void)sig; }

void callerfd_setup(void)
{
	struct sigaction alarm = {.sa_handler = on_alarm};
	sigaction(SIGALRM, &alarm, NULL);
}

int nonblocking_out(int fd, int *sock)
{
	struct stat st;
	*sock = 0;
	int ptn;
	if (fstat(fd, &st) < 0 || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		return fd;
	/* Not for a pty master, /dev/tty, the console or ptmx: opening those
	 * again is another terminal (ptmx makes a new pty); bounded writes
	 * to the fd itself it is. */
	if (S_ISCHR(st.st_mode) && (major(st.st_rdev) == 5 || ioctl(fd, TIOCGPTN, &ptn) == 0))
		return fd;
	if (S_ISSOCK(st.st_mode)) {
		*sock = 1;
		return fd;
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int own = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat ost;
	if (own >= 0 && fstat(own, &ost) == 0 && ost.st_dev == st.st_dev && ost.st_ino == st.st_ino)
		return own;
	if (own >= 0)
		close(own);
	return fd;
}

/* Anything but a socket gets the alarm, which interrupts a write the
 * caller's end holds up (a terminal stopped with TCOOFF, a full pipe jail
 * could not reopen non-blocking). */
ssize_t bounded_write(int fd, int sock, const void *buf, size_t n)
{
	if (sock)
		return send(fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	struct itimerval on = {.it_value = {0, 100000}}, off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &on, NULL);
	ssize_t w = write(fd, buf, n);
	int err = errno;
	setitimer(ITIMER_REAL, &off, NULL);
	errno = w < 0 && err == EINTR ? EAGAIN : err;
	return w;
}

int write_out(int fd, int sock, const char *buf, size_t n)
{
	uint64_t until = monotonic_ns() + 2000000000ull;
	while (n > 0) {
		if (monotonic_ns() >= until) {
			errno = ETIMEDOUT;
			return -1;
		}
		ssize_t w = bounded_write(fd, sock, buf, n);
		if (w > 0) {
			buf += w, n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		struct pollfd pf = {.fd = fd, .events = POLLOUT};
		poll(&pf, 1, 100);
	}
	return 0;
}
