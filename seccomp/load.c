/* Loading the jail's seccomp filter, the command's process's last step
 * before exec: after it, the command's own calls are all the filter sees.
 * C, as the whole init stage is (jail/stage.h says why). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal/linux/fdpass.h"
#include "seccomp/sc.h"

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
		int ok = fd_send(sock, &listener, 1);
		int err = errno;
		close(listener);
		if (ok < 0)
			return jerr_set(e, err, "hand the seccomp listener to jail");
	}
	close(sock);
	return 0;
}
