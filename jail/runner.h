/* The runner's state (runner.c): one struct runner for one run, which the
 * files of each of its concerns (relay.c, proxyctl.c, runlimits.c,
 * signals.c, report.c) read and change from their on_* handlers. */
#ifndef JAIL_RUNNER_H
#define JAIL_RUNNER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup/cg.h"
#include "internal/wire/err.h"
#include "jail/diskwatch.h"
#include "jail/monotonic.h"
#include "jail/proxyctl.h"
#include "jail/pty.h"
#include "jail/relay.h"
#include "jail/report.h"
#include "jail/runplan.h"
#include "jail/stage.h"

struct runner {
	const struct run_plan *plan;
	struct outcome o; /* what finish reports */
	struct jerr e;    /* why setup failed */
	uint64_t started; /* when jail started (CLOCK_MONOTONIC, ns) */
	pid_t stage;      /* the init stage */
	int stage_gone;   /* ... reaped */
	pid_t pid1;       /* the jail's PID 1, once the init stage said (0 before) */
	int child[FD_NFIXED + RUN_MAX_TREES]; /* the init stage's fds (stage.h), until it has them */
	int out_pipe[2];  /* the relay pipes' write ends, until the init stage has them */

	/* The runner's ends of what the init stage got (stage.h), -1 once
	 * done with. */
	int plan_out;     /* FD_PLAN: the forwarded plan, then the signals passed on */
	int error_in;     /* FD_ERR: the init stage's (or the command's) error line */
	int status_in;    /* FD_STATUS: PID 1's status record */
	int sync_in;      /* FD_SYNC: 'U', then PID 1's pid */
	int notify_sock;  /* FD_NOTIFY: the seccomp listener comes on it */
	int listener;     /* the seccomp listener: handed calls to answer */

	unsigned char *fwd; /* what goes out on plan_out (forward_encode) */
	size_t fwd_len, fwd_sent, fwd_sendable; /* sendable: all but 'C' until the jail is in its cgroup */
	size_t errlen;           /* of o.err, so far */
	unsigned char pidbuf[4]; /* PID 1's pid, as it comes */
	size_t pidlen;

	/* Signals passed on to PID 1, a byte each, on the plan pipe once the
	 * plan is sent (signals.c). */
	int sigfd;
	unsigned char sigq[256];
	size_t nsigq;

	int timer;         /* the time limit's timerfd, or -1 (runlimits.c) */
	int pids;          /* what tells the process limit was hit, or -1 */
	short pids_events; /* ... and what to poll it for */

	struct disk disk; /* the disk limit and reserve (diskwatch.c) */
	struct cg_run cg;
	struct relay out[2]; /* stdout, stderr, when capped; in tty mode stdout is the pty's */
	struct proxy px;
	struct pty pty;      /* tty mode (pty.c) */
};

/* runner_main runs the command argv in the jail the plan describes, as
 * jail's own process: it never returns. status_to is where the status
 * record goes ("" for nowhere, a path, or fd:N); started is when jail
 * started (CLOCK_MONOTONIC, ns), for the setup time. */
void runner_main(const struct run_plan *p, char **argv, const char *status_to, uint64_t started)
	__attribute__((noreturn));

#endif
