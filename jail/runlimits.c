/* The limits the runner holds the jail to while it runs: the wall time
 * (a timerfd at jail's start plus the limit, stopped time included), and
 * the process limit under on_pids_limit = "kill" (a refused fork ends the
 * run, as a fork bomb would otherwise spin until the time limit). The
 * runner runs it: C, before the Go runtime, as the whole runner is
 * (runner.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "jail/runlimits.h"

/* arm_pids watches the process limit being hit: v2 notifies changes of
 * pids.events (POLLPRI); v1 does not (neither poll nor inotify wakes), so
 * there it is read every 10 ms (a pread, ~2 us). */
static int arm_pids(struct runner *r)
{
	r->pids = (r->plan->cg.flags & CG_PIDS_KILL) ? r->cg.pids_events : -1;
	r->pids_events = POLLPRI;
	if (r->pids < 0 || r->cg.v2)
		return 0;
	struct itimerspec every = {.it_interval = {0, 10000000}, .it_value = {0, 10000000}};
	r->pids = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (r->pids < 0 || timerfd_settime(r->pids, 0, &every, NULL) < 0)
		return jerr_set(&r->e, errno, "timerfd for the process limit");
	r->pids_events = POLLIN;
	return 0;
}

/* arm_time sets the time limit: without it, it would not hold, and no
 * jail is better than less of one. */
static int arm_time(struct runner *r)
{
	r->timer = -1;
	if (!r->plan->time_limit_ns)
		return 0;
	r->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	uint64_t at = r->started + r->plan->time_limit_ns;
	struct itimerspec its = {.it_value = {.tv_sec = (time_t)(at / 1000000000u), .tv_nsec = (long)(at % 1000000000u)}};
	if (r->timer < 0 || timerfd_settime(r->timer, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		return jerr_set(&r->e, errno, "timerfd for the time limit");
	return 0;
}

int limits_arm(struct runner *r) { return arm_pids(r) < 0 || arm_time(r) < 0 ? -1 : 0; }

void kill_jail(const struct runner *r)
{
	if (r->pid1)
		kill(r->pid1, SIGKILL);
	else if (!r->stage_gone)
		kill(-r->stage, SIGKILL);
}

/* PID 1 dies, and the kernel kills the whole pid namespace with it:
 * daemons and grandchildren too. */
void on_timer(struct runner *r, short revents)
{
	r->o.timed_out = 1;
	kill_jail(r);
	close(r->timer);
	r->timer = -1;
}

/* The process limit refused a fork: a fork bomb, or a runaway. Ended like
 * the time limit ends a run, not left spinning on fork until it. */
void on_pids(struct runner *r, short revents)
{
	uint64_t ticks;
	if (r->pids_events == POLLIN && read(r->pids, &ticks, sizeof ticks) < 0)
		ticks = 0;
	if (cg_pids_hit(&r->cg)) {
		r->o.pids_killed = 1;
		kill_jail(r);
		r->pids = -1;
	}
}
