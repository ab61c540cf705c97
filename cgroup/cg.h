/* The runner's side of the cgroup package: one cgroup per run, made,
 * limited, joined, watched, measured and removed (cg.c). place.go decides,
 * when a run is planned, which hierarchies and parent directories. */
#ifndef JAIL_CGROUP_H
#define JAIL_CGROUP_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal/wire/err.h"
#include "internal/wire/wire.h"

/* Flags of the cgroup part of a plan. */
#define CG_ON 1u  /* the run gets a cgroup */
#define CG_V2 2u  /* on the unified hierarchy (else v1, one dir per hierarchy) */
#define CG_OWN 4u /* v2: the one dir is relative to the runner's own cgroup */
#define CG_PIDS_KILL 8u /* the run ends when the process limit refuses a fork */

/* Controllers: the bits of a plan's controller set (place.go reads them
 * through cgo as Controllers). */
#define CG_MEMORY 1u
#define CG_PIDS 2u
#define CG_CPU 4u
#define CG_CPUACCT 8u

#define CG_MAX_DIRS 4

/* The unified hierarchy's mount point (place.go's MountPoint reads it). */
#define CG_UNIFIED "/sys/fs/cgroup"

/* The leaf of its delegated cgroup the runner moves to (place.go's
 * RunnerLeaf reads it). */
#define CG_RUNNER_LEAF "jail.runner"

struct cg_plan {
	uint32_t flags;
	uint64_t memory;                     /* bytes; 0: no limit */
	uint32_t pids;                       /* 0: no limit */
	uint32_t cpu_quota_us, cpu_period_us; /* quota 0: no limit */
	uint32_t ndirs;
	struct {
		const char *path; /* the parent of run cgroups in one hierarchy */
		uint32_t ctrl;
	} dirs[CG_MAX_DIRS];
};

/* cg_plan_decode reads the cgroup part of a run plan (see jail/plan.go). */
void cg_plan_decode(struct wire *w, struct cg_plan *p);

/* A run's cgroup is named for its runner, printf-style: its pid, its start
 * (clock ticks since boot, /proc/PID/stat's field 22, which the reader's
 * time namespace shifts) and the inodes of its pid and time namespaces (0
 * for what could not be read, or a kernel without time namespaces). With
 * them a later run can prove the runner gone, and knows when it cannot
 * (cg.c's sweep). */
#define CG_RUN_NAME "r%d-%llu-%llu-%llu"

/* Who the runner is, for its cgroup's name. */
struct cg_self {
	pid_t pid;
	unsigned long long start, pidns, timens;
	int timens_ok; /* timens was read (0 there: no time namespaces) */
};

/* One run's cgroup, in each hierarchy. */
struct cg_run {
	int n;
	char path[CG_MAX_DIRS][PATH_MAX];
	uint32_t ctrl[CG_MAX_DIRS];
	int v2;
	int dir_fd;      /* v2: the run's cgroup, for CLONE_INTO_CGROUP; else -1 */
	int pids_events; /* pids.events, polled (POLLPRI) for the limit being hit; or -1 */
	int freeze;      /* v2: cgroup.freeze, to stop the whole jail while jail is stopped; else -1 */
	int events;      /* v2: cgroup.events, polled (POLLPRI) for it being frozen; else -1 */
	struct cg_self self; /* the runner, as the cgroup's name says */
};

/* What the cgroup saw of the run. -1: not known here. */
struct cg_usage {
	int64_t memory_peak;   /* bytes */
	int64_t oom_kills;     /* processes the OOM killer ended */
	int64_t pids_max;      /* forks refused by pids.max */
	int64_t pids_peak;     /* most processes at once */
	int64_t cpu_user_us, cpu_system_us;
	int64_t cpu_throttled; /* periods the CPU quota held the jail back */
};

/* cg_create makes the run's cgroup in each hierarchy, with its limits. */
int cg_create(const struct cg_plan *p, struct cg_run *r, struct jerr *e);

/* cg_attach moves process pid, with its threads, into the run's cgroup;
 * on v2 runs are started in it (CLONE_INTO_CGROUP) and this does nothing. */
int cg_attach(const struct cg_run *r, pid_t pid, struct jerr *e);

/* cg_join moves process pid into the run's cgroup, on v1 and v2 alike:
 * for a process of jail's own that serves the jail (the proxy). */
int cg_join(const struct cg_run *r, pid_t pid, struct jerr *e);

/* cg_pids_hit reports whether pids.max has refused a fork in the run. */
int cg_pids_hit(const struct cg_run *r);

/* cg_thaw thaws the run's cgroup (v2) if it is frozen: jail runs, so its
 * jail does too. PID 1 freezes it, through r->freeze, while jail is
 * stopped: a frozen process, unlike a stopped one, cannot be continued by
 * a SIGCONT of the jail's own making. */
void cg_thaw(const struct cg_run *r);

/* cg_measure reads the run's usage and the limits' events. */
void cg_measure(const struct cg_run *r, struct cg_usage *u);

/* cg_remove kills what is left in the run's cgroup and removes it, then
 * removes the cgroups that runs whose jail was killed (SIGKILL) left,
 * where their names prove those runners gone (see CG_RUN_NAME). */
void cg_remove(struct cg_run *r);

#endif
