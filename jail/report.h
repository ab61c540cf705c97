/* How a run is reported (report.c): the exit status, jail's one line on
 * stderr, the status record (--status-json) and the audit log's line, all
 * from one outcome, at the runner's single exit point, finish. */
#ifndef JAIL_REPORT_H
#define JAIL_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include "cgroup/cg.h"
#include "internal/wire/err.h"
#include "jail/proxyctl.h"
#include "jail/runplan.h"
#include "seccomp/sc.h"

/* The run as it went, for the exit status, the stderr line and the record. */
struct outcome {
	struct sc_report *denied;      /* the calls the filter refused (or, audited, let through) */
	int have_status, exited, code; /* from PID 1's status record */
	int timed_out;
	int pids_killed;               /* jail ended the run: the process limit was hit */
	struct cg_usage cg;            /* what the run's cgroup saw */
	int have_cg;
	int audit_fd;                  /* the audit log, open for appending (0: none; never stdin) */
	int status_fd;                 /* where the record goes (status_open), or -1 */
	char **argv;                   /* the command, for the audit log */
	struct cg_run *cgr;            /* the run's cgroup, removed when jail ends */
	struct proxy *proxy;           /* the allowlist proxy, and its report */
	const struct disk *disk;       /* the disk limits' watch: what was written, which ended the run */
	uint64_t out_dropped[2];       /* bytes of stdout, stderr past --max-output */
	uint64_t out_lost;             /* bytes the caller's end did not take (closed, or not read) */
	int out_closed[2];             /* the caller closed its end of stdout, stderr */
	char err[1100];                /* the init stage's error line */
	int keyring_inherited;         /* PID 1 went on in the caller's session keyring (a note, err.h) */
	const char *fatal;             /* the runner's own failure, which ended the jail */
	const char *status_to;         /* where the status record goes, for messages */
	uint64_t setup_ns, wall_ns;
	struct rusage ru;
};

/* finish reports the run and ends jail with the command's status, or its
 * own: 125 when the jail could not be built (jail_err, or o says so),
 * 126/127 when the command could not be exec'd, 128+N when it died of
 * signal N. It is the runner's only way out once the record may be
 * written. */
void finish(const struct run_plan *p, const struct outcome *o, const char *jail_err) __attribute__((noreturn));

/* say writes jail's one line to stderr, "jail: " first (in a run jail sh
 * made, each flag it suggests spelled as jail-sh takes it), waiting up to
 * about two seconds for the caller's end to take it, never blocked for
 * good. */
void say(const char *line);

/* fmt_bytes writes n as profiles do: "512M". */
void fmt_bytes(uint64_t n, char *out, size_t size);

/* status_open opens where the record goes: fd:N (a copy above 2, so the
 * command's stdio stay as they are), or a path, checked now and opened
 * again for the record once the jail is gone. -1 for none, -2 on error
 * (*e says why). */
int status_open(const char *to, struct jerr *e);

/* audit_open opens the audit log for appending, before anything runs: a
 * log that cannot be written stops the run. Never through a symlink, only
 * a regular file of the runner's own; -1 with *e saying why. */
int audit_open(const char *path, struct jerr *e);

#endif
