/* The run plan: everything the runner needs to start and watch one jail,
 * and the init stage to build it, as jail/plan.go (NewPlan) writes it. The
 * Go side plans a run once; the plan is cached (plancache/) and replayed
 * by the runner without starting the Go runtime at all. The runner hands
 * the init stage the same bytes, with a tail of what only this run knows
 * (runplan.c: one format end to end). */
#ifndef JAIL_RUNPLAN_H
#define JAIL_RUNPLAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>

#include "cgroup/cg.h"
#include "internal/wire/err.h"
#include "internal/wire/wire.h"

#define RUNPLAN_MAGIC 0x4e55524au /* "JRUN" */
#define HANDOFF_MAGIC 0x464d524au /* "JRMF": the Go side's memfd: u64 started, str status_to, bytes plan, bytes deps */
#define RUNPLAN_VERSION 6u

/* Flags of a run plan. */
#define RUN_ROOT 1u /* the caller is root: trees to clone, host ids to map */
/* With RUN_ROOT: the caller lacks CAP_SYS_ADMIN (a container's root), so
 * nothing is cloned or idmapped: the jail, as the host ids, opens its
 * binds itself, as that unprivileged user's jail would. */
#define RUN_NO_ADMIN 2u

/* Flags of a tree the runner clones for a root caller. */
#define TREE_RO 1u    /* recursively read-only */
#define TREE_IDMAP 2u /* idmapped from its owner to the jail's host ids */

/* The most trees a plan may name; it sets fewer rlimits than RUN_MAX_RLIMITS. */
#define RUN_MAX_TREES 4096
#define RUN_MAX_RLIMITS 64

/* The most the init stage reads on FD_PLAN: the plan and the tail. */
#define FORWARD_MAX (64u << 20)

struct run_tree {
	const char *path;
	uint32_t flags, owner_uid, owner_gid;
};

struct run_rlimit {
	uint32_t resource;
	uint64_t soft, hard;
};

struct run_plan {
	const unsigned char *raw; /* the bytes decoded, which the runner forwards */
	size_t raw_len;
	uint64_t time_limit_ns;
	uint32_t flags;
	uint32_t host_uid, host_gid; /* root callers: the jail's host ids */
	uint32_t uid, gid;           /* the command's ids inside */
	const char *profile, *profile_hash;
	int cached; /* replayed from the plan cache, not planned for this run */
	uint32_t ntrees;
	struct run_tree *trees;
	const char *mounts;      /* the mount section body (mount/mount.h) */
	size_t mounts_len;
	uint32_t proc_flags;     /* stage.h's PROC_* */
	const char *hostname, *cwd;
	struct wire keep, set;   /* strs: env names kept from the host, K=V set */
	uint32_t nrlimits;
	struct run_rlimit *rlimits;
	struct cg_plan cg;       /* the run's cgroup */
	uint64_t max_output;     /* bytes each of stdout and stderr may pass; 0: no cap, no relay */
	uint64_t disk_limit;     /* bytes the jail may write to disk-backed files; 0: none */
	uint64_t disk_reserve;   /* free bytes each writable bind's filesystem keeps ... */
	uint32_t disk_percent;   /* ... or this percentage of it (both: the smaller) */
	uint32_t ndisk;          /* the writable binds: */
	struct wire disk_binds;  /* strs: 2 × ndisk, each's source and where the jail sees it */
	uint64_t session_disk;   /* the bytes the session's workspace may hold; 0: none, or no session */
	const char *session_dir; /* the session's directory, its account's ("" none) */
	const char *limits_json; /* the status record's "limits", as planned */
	const char *net_mode;    /* none, allowlist or host */
	const char *net_config;  /* allowlist: the proxy's configuration (JSON) */
	const char *audit_path;  /* the audit log to append the run's record to; "" none */
	const char *session;     /* the session, for the audit log */
	const char *version;     /* jail's version, for the audit log */
	const char *secrets;     /* the record's fields for secrets: "secrets" (keys, values "***"), the credential bindings and the run CA; "" none */
	uint32_t sc_flags;       /* seccomp/sc.h's SC_* */
	const char *sc_name;     /* the policy's name, for the record */
	const char *sc_bpf;      /* the compiled filter the command gets */
	size_t sc_len;
	struct wire sc_answers;  /* what the runner answers handed calls with */
	/* Not in the bytes: malloc'd buffers of the caller's (the cache entry
	 * or Go's hand-over, with the key's HOME and the status path; jail-sh's
	 * rewritten argv) that the init stage's fork zeroes (stagestart.c):
	 * it gets its plan on FD_PLAN. */
	void *wipe[2];
};

/* runplan_decode reads a run plan; strings point into buf. A plan it
 * refuses leaves nothing allocated. */
int runplan_decode(const unsigned char *buf, size_t len, struct run_plan *p, struct jerr *e);

/* runplan_free frees what runplan_decode allocated (a runner never needs
 * to: it ends with its run). */
void runplan_free(struct run_plan *p);

/* The Go side's hand-over to the runner (jail/run.go's memfd). */
struct handoff {
	uint64_t started;         /* when jail started (CLOCK_MONOTONIC, ns) */
	const char *status_to;    /* where the status record goes */
	const unsigned char *plan; /* the run plan's bytes */
	size_t plan_len;
	const char *deps;          /* for the plan cache (plancache.h); none: not to be cached */
	size_t deps_len;
	unsigned char *buf;       /* what the fields point into: free it */
};

/* handoff_read reads the hand-over from fd, which must be the Go side's
 * sealed memfd, and closes it; 0, or -1 with *e saying why. */
int handoff_read(int fd, struct handoff *h, struct jerr *e);

/* What the init stage gets on FD_PLAN: the run plan, and the tail the
 * runner adds for this run. */
struct forwarded {
	struct run_plan plan;
	char **argv, **envp; /* the command, and its whole environment */
	uint32_t umask;
	uint32_t tty;        /* the runner chose tty mode for this run (pty.c) */
	struct winsize ws;   /* ... and the caller's terminal's size then */
};

/* forward_encode makes what the runner writes on FD_PLAN: u32 length, the
 * plan's bytes (bytes), the tail (strs argv, strs envp: the host's
 * variables the plan keeps, then the plan's own, and in tty mode the
 * caller's TERM; u32 umask; u32 tty, u32 rows, cols, xpixel, ypixel: tty
 * is not NULL, the caller's terminal's size), and, outside the length, the
 * byte 'C' that the runner sends once the jail is in its cgroup. *out is
 * malloc'd; 0, or -1 with *e set. */
int forward_encode(const struct run_plan *p, char **argv, char **environ_, uint32_t umask, const struct winsize *tty,
		   unsigned char **out, size_t *len, struct jerr *e);

/* forward_decode reads what follows the length (buf, len): strings point
 * into buf. Anything short, long or malformed is refused, with nothing
 * left allocated. */
int forward_decode(const unsigned char *buf, size_t len, struct forwarded *f, struct jerr *e);

/* forward_free frees what forward_decode allocated. */
void forward_free(struct forwarded *f);

#endif
