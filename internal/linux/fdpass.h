/* Passing file descriptors over a unix socket (SCM_RIGHTS), with one byte of
 * data: the command's process hands the runner its seccomp listener
 * (seccomp/load.c to jail/runner.c) and PID 1 the network's sockets and
 * /dev/net/tun (jail/netns.c). C, as every caller runs before the Go runtime;
 * header-only, so the C of each package that includes it links its own
 * copy. */
#ifndef JAIL_LINUX_FDPASS_H
#define JAIL_LINUX_FDPASS_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The most fds one message carries. */
#define FDPASS_MAX 10

/* fd_send sends the n fds (1..FDPASS_MAX) over sock; 0, or -1 (errno). */
static inline int fd_send(int sock, const int *fds, int n)
{
	char byte = 'L';
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(FDPASS_MAX * sizeof(int))];
	} u;
	if (n < 1 || n > FDPASS_MAX) {
		errno = EINVAL;
		return -1;
	}
	memset(&u, 0, sizeof u);
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = CMSG_SPACE((size_t)n * sizeof(int))};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, (size_t)n * sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* fd_recv_range takes min..max fds (within 1..FDPASS_MAX) that fd_send
 * sent on sock, close-on-exec, and returns how many; -1 for anything else
 * (EOF, no fds, a count out of range, a truncated message), and then
 * whatever fds did come are closed: none is left open behind a failure. */
static inline int fd_recv_range(int sock, int *fds, int min, int max)
{
	char byte;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(FDPASS_MAX * sizeof(int))];
	} u;
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	if (min < 1 || max > FDPASS_MAX || min > max || recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	int ok = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t got = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int in[FDPASS_MAX];
		if (got > FDPASS_MAX)
			got = FDPASS_MAX;
		memcpy(in, CMSG_DATA(c), got * sizeof(int));
		if (ok < 0 && got >= (size_t)min && got <= (size_t)max && !(msg.msg_flags & MSG_CTRUNC)) {
			memcpy(fds, in, got * sizeof(int));
			ok = (int)got;
			continue;
		}
		for (size_t i = 0; i < got; i++)
			close(in[i]);
	}
	return ok;
}

/* fd_recv takes exactly n fds (1..FDPASS_MAX), as fd_recv_range does:
 * 0, or -1. */
static inline int fd_recv(int sock, int *fds, int n)
{
	return fd_recv_range(sock, fds, n, n) < 0 ? -1 : 0;
}

#endif
