/* The signals jail passes on to the command (signals.c): blocked, read
 * from a signalfd, queued, and sent to PID 1 a byte each on the plan pipe;
 * and ^Z, which stops jail as a job is stopped. */
#ifndef JAIL_SIGNALS_H
#define JAIL_SIGNALS_H

#include <signal.h>

#include "jail/runner.h"

/* signals_hold blocks SIGUSR1 and SIGUSR2 from jail's first instruction
 * to the runner's signalfd: their default action would end jail, and Go
 * (which keeps a mask it started with) would drop them while it plans.
 * Held, they wait, across the exec into the runner too, and are passed
 * on once the command runs, as the runner's own are. */
void signals_hold(void);

/* signals_block blocks the signals jail passes on (*fwd, for
 * signals_open), and ignores SIGPIPE and SIGTTOU: a dead init stage is an
 * EPIPE rather than jail's death, and a command that sets TOSTOP on the
 * caller's terminal must not stop jail when it writes there. */
void signals_block(sigset_t *fwd);

/* signals_open reads the blocked signals from a signalfd; 0, or -1 with
 * r->e saying why. */
int signals_open(struct runner *r, const sigset_t *fwd);

/* on_signal queues a signal for PID 1; ^Z stops jail too. */
void on_signal(struct runner *r, short revents);

/* signals_flush writes what is queued on the plan pipe, once the plan is
 * out and the pipe takes more. */
void signals_flush(struct runner *r);

#endif
