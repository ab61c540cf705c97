/* The output cap: relay passes one of the command's output streams on to
 * jail's own, up to the cap; past it, it reads and drops (so the command
 * never blocks on a full pipe), counts, and at the end adds one line saying
 * how much went. It never blocks jail itself, so the time limit, signals
 * and the seccomp answers go on whatever the caller's end does: a pipe or
 * terminal gets a private non-blocking open of its own (a stopped
 * terminal, TCOOFF or ^S, would block a plain write), a socket gets
 * MSG_DONTWAIT; a regular file, which does not block, keeps the caller's
 * own description and offset. The runner runs it: C, before the Go
 * runtime, as the whole runner is (runner.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "jail/callerfd.h"
#include "jail/relay.h"
#include "jail/report.h"

void relay_open(struct relay *r, int in, int fd, const char *name, uint64_t cap)
{
	*r = (struct relay){.in = in, .name = name, .cap = cap};
	r->out = nonblocking_out(fd, &r->sock);
}

/* The caller's end is watched for its reader going away (POLLERR on a
 * pipe, POLLHUP on a socket or a hung-up terminal) while nothing is
 * written to it: past the cap, output is only dropped. */
void relay_fds(const struct relay *r, struct pollfd *io, struct pollfd *gone)
{
	if (r->off < r->len)
		*io = (struct pollfd){.fd = r->out, .events = POLLOUT};
	else
		*io = (struct pollfd){.fd = r->in, .events = POLLIN};
	*gone = (struct pollfd){.fd = r->broken || r->in < 0 ? -1 : r->out, .events = 0};
}

void relay_give_up(struct relay *r)
{
	r->lost += r->len - r->off;
	r->off = r->len = 0;
	if (r->in >= 0)
		close(r->in);
	r->in = -1;
}

/* The command's end is closed too, so its next write fails (SIGPIPE or
 * EPIPE) as it would without jail, and `yes | head -1` ends as it does
 * outside. */
void relay_broken(struct relay *r)
{
	r->broken = 1;
	relay_give_up(r);
}

/* relay_end is the pipe's end: the line saying what was dropped goes out
 * last. */
static void relay_end(struct relay *r)
{
	close(r->in);
	r->in = -1;
	if (r->dropped && !r->broken) {
		char cap[64];
		fmt_bytes(r->cap, cap, sizeof cap);
		int m = snprintf(r->buf, sizeof r->buf, "%sjail: output truncated: %llu bytes of %s dropped (cap %s)\n",
				 r->last_nl || !r->passed ? "" : "\n", (unsigned long long)r->dropped, r->name, cap);
		r->len = m > 0 ? (size_t)m : 0;
	}
}

void relay_step(struct relay *r)
{
	if (r->off < r->len) {
		size_t n = r->len - r->off;
		ssize_t w = bounded_write(r->out, r->sock, r->buf + r->off, n);
		if (w > 0) {
			r->off += (size_t)w;
		} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
			/* EPIPE: the caller closed its end; EIO: a terminal
			 * hung up. */
			relay_broken(r);
		}
		if (r->off == r->len)
			r->off = r->len = 0;
		return;
	}
	ssize_t n = read(r->in, r->buf, sizeof r->buf);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		relay_end(r);
		return;
	}
	uint64_t keep = r->passed >= r->cap ? 0 : r->cap - r->passed;
	if (keep > (uint64_t)n)
		keep = (uint64_t)n;
	r->dropped += (uint64_t)n - keep;
	r->passed += keep;
	if (keep) {
		r->len = (size_t)keep;
		r->last_nl = r->buf[keep - 1] == '\n';
	}
}
