/* The output cap (relay.c): each of the command's stdout and stderr goes
 * through a pipe that the runner relays to the caller's own, up to the
 * cap, dropping and counting the rest. */
#ifndef JAIL_RELAY_H
#define JAIL_RELAY_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

struct relay {
	int in, out;            /* the pipe from the jail (-1: at its end); where to write */
	int sock;               /* out is a socket: send with MSG_DONTWAIT */
	const char *name;       /* stdout, stderr */
	uint64_t cap, passed, dropped, lost;
	int broken;             /* the caller's end is gone (closed): the command's end is closed too */
	int last_nl;            /* the last byte passed on was a newline */
	size_t off, len;
	char buf[65536];
};

/* relay_open relays the pipe in to the caller's fd, up to cap bytes. */
void relay_open(struct relay *r, int in, int fd, const char *name, uint64_t cap);

/* relay_fds is what to wait for: *io the caller's end while something
 * waits to go out, else the pipe (fd -1: the relay is done); *gone the
 * caller's end, watched for its reader going away. */
void relay_fds(const struct relay *r, struct pollfd *io, struct pollfd *gone);

/* relay_step passes on what waits, or reads more, once *io is ready. */
void relay_step(struct relay *r);

/* relay_broken ends a relay whose caller closed its end (*gone said so). */
void relay_broken(struct relay *r);

/* relay_give_up drops what still waits for a caller that does not read:
 * the jail is over, and jail must end too. */
void relay_give_up(struct relay *r);

#endif
