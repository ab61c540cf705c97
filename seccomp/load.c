/* Loading the jail's seccomp filter, the init stage's last step before
 * exec: after it, the command's own calls are all the filter sees. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp/sc.h"

/* send_fd passes fd over the unix socket sock. */
static int send_fd(int sock, int fd)
{
	char byte = 'L';
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	memset(&u, 0, sizeof u);
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof fd);
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

int sc_load(uint32_t flags, const void *bpf, size_t len, int sock, struct jerr *e)
{
	if (!(flags & SC_LOAD))
		return 0;
	if (len == 0 || len % sizeof(struct sock_filter) || len / sizeof(struct sock_filter) > 0xffff)
		return jerr_set(e, 0, "seccomp: malformed program");
	struct sock_fprog prog = {
		.len = (unsigned short)(len / sizeof(struct sock_filter)),
		.filter = (struct sock_filter *)bpf,
	};
	unsigned long fl = (flags & SC_NOTIFY) ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, fl, &prog);
	if (r < 0)
		return jerr_set(e, errno, "load the seccomp filter (jail check tells whether this host has seccomp)");
	if (flags & SC_NOTIFY) {
		/* The calls the filter hands on wait for the runner: give it
		 * the listener before any of them can happen. */
		int listener = (int)r;
		int ok = send_fd(sock, listener);
		int err = errno;
		close(listener);
		if (ok < 0)
			return jerr_set(e, err, "hand the seccomp listener to jail");
	}
	close(sock);
	return 0;
}
