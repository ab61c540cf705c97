/* The limits the runner holds the jail to while it runs (runlimits.c): the
 * wall time, and the process limit when a refused fork ends the run. The
 * others are the kernel's (cgroup, rlimits). */
#ifndef JAIL_RUNLIMITS_H
#define JAIL_RUNLIMITS_H

#include "jail/runner.h"

/* limits_arm starts the time limit's timer (from when jail started) and
 * the process limit's watch; 0, or -1 with r->e saying why. */
int limits_arm(struct runner *r);

/* on_timer is the time limit: the jail is killed. */
void on_timer(struct runner *r, short revents);

/* on_pids is a change of the process limit's events (v2), or the timer
 * to read them (v1): a refused fork kills the jail. */
void on_pids(struct runner *r, short revents);

/* kill_jail ends the whole jail: PID 1 dies, and the kernel kills its pid
 * namespace with it, daemons and grandchildren too. Before PID 1 is
 * known, the init stage's process group holds it. */
void kill_jail(const struct runner *r);

#endif
