/* The run plan: everything the runner (runner.c) needs to start and watch
 * one jail, as runplan.go writes it. The Go side plans a run once; the
 * plan is cached (plancache/) and replayed by the runner without starting
 * the Go runtime at all. */
#ifndef JAIL_RUNPLAN_H
#define JAIL_RUNPLAN_H

#include <stddef.h>
#include <stdint.h>

#include "cgroup/cg.h"
#include "internal/wire/err.h"
#include "internal/wire/wire.h"

#define RUNPLAN_MAGIC 0x4e55524au /* "JRUN" */
#define HANDOFF_MAGIC 0x464d524au /* "JRMF": the Go side's memfd: u64 started, str status_to, bytes plan, bytes deps */
#define RUNPLAN_VERSION 2u

/* Flags of a run plan. */
#define RUN_ROOT 1u /* the caller is root: trees to clone, host ids to map */

/* Flags of a tree the runner clones for a root caller. */
#define TREE_RO 1u    /* recursively read-only */
#define TREE_IDMAP 2u /* idmapped from its owner to the jail's host ids */

struct run_tree {
	const char *path;
	uint32_t flags, owner_uid, owner_gid;
};

struct run_plan {
	uint64_t time_limit_ns;
	uint32_t flags;
	uint32_t host_uid, host_gid; /* root callers: the jail's host ids */
	uint32_t uid, gid;           /* the command's ids inside */
	const char *profile, *profile_hash;
	int cached; /* replayed from the plan cache, not planned for this run */
	uint32_t ntrees;
	struct run_tree *trees;
	const char *mounts;      /* the mount section body */
	size_t mounts_len;
	const char *proc_prefix; /* flags, uid, gid, hostname, cwd */
	size_t proc_prefix_len;
	struct wire keep, set;   /* strs: env names kept from the host, K=V set */
	const char *rlimits;     /* u32 count, then the entries */
	size_t rlimits_len;
	struct cg_plan cg;       /* the run's cgroup */
	uint64_t max_output;     /* bytes each of stdout and stderr may pass; 0: no cap, no relay */
	const char *limits_json; /* the status record's "limits", as planned */
	const char *net_mode;    /* none, allowlist or host */
	const char *net_config;  /* allowlist: the proxy's configuration (JSON) */
	const char *audit_path;  /* the audit log to append the run's record to; "" none */
	const char *session;     /* the session, for the audit log */
	const char *version;     /* jail's version, for the audit log */
	const char *secrets;     /* the record's "secrets" (keys, values "***"); "" none */
	uint32_t sc_flags;       /* seccomp/sc.h's SC_* */
	const char *sc_name;     /* the policy's name, for the record */
	const char *sc_bpf;      /* the compiled filter the command gets */
	size_t sc_len;
	struct wire sc_answers;  /* what the runner answers handed calls with */
};

/* runplan_decode reads a run plan; strings point into buf. */
int runplan_decode(const unsigned char *buf, size_t len, struct run_plan *p, struct jerr *e);

/* runplan_free frees what runplan_decode allocated (a runner never needs
 * to: it ends with its run). */
void runplan_free(struct run_plan *p);

/* runner_main runs the command argv in the jail the plan describes, as
 * jail's own process: it never returns. status_to is where the status
 * record goes ("" for nowhere, a path, or fd:N); started is when jail
 * started (CLOCK_MONOTONIC, ns), for the setup time. */
void runner_main(const struct run_plan *p, char **argv, const char *status_to, uint64_t started_ns)
	__attribute__((noreturn));

/* monotonic_ns is CLOCK_MONOTONIC in nanoseconds. */
uint64_t monotonic_ns(void);

#endif
