/* Writing to the caller's ends (stdout, stderr, fd:N) without ever blocking
 * jail for long (callerfd.c): a caller that does not read, or a terminal
 * stopped with ^S, must not hold up the time limit, the signals or the
 * seccomp answers. */
#ifndef JAIL_CALLERFD_H
#define JAIL_CALLERFD_H

#include <sys/types.h>

/* callerfd_setup readies bounded_write: SIGALRM only interrupts. */
void callerfd_setup(void);

/* nonblocking_out is fd, or, for a pipe or terminal, a private
 * non-blocking open of the same file; *sock says fd is a socket, to send
 * with MSG_DONTWAIT. A regular file does not block, and keeps the caller's
 * own description and offset. */
int nonblocking_out(int fd, int *sock);

/* bounded_write is one write that never blocks jail for long: a socket
 * gets MSG_DONTWAIT, anything else an alarm 100 ms on; EAGAIN when it
 * would block. */
ssize_t bounded_write(int fd, int sock, const void *buf, size_t n);

/* write_out writes all of buf to fd, for up to about two seconds, waiting
 * for the caller's end to take it; 0 once it did, else -1 (errno;
 * ETIMEDOUT: the caller's end did not take it in time). */
int write_out(int fd, int sock, const char *buf, size_t n);

#endif
