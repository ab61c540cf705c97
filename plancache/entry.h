/* The plan cache's inside, shared by its two sides: the lookup (lookup.c),
 * run from the jail binary's constructor before the Go runtime starts, and
 * the store (store.c), run by the runner once Go has planned a run. Both
 * are C so that one side owns the key, the entry format and the directory.
 *
 * An entry, named by the FNV-1a hash of its key in hex, is, in wire.h's
 * encoding:
 *   u32 magic "JCAC", u32 version,
 *   bytes key   the invocation (key.c),
 *   deps        u32 count, then each file the plan came from: str path,
 *               u32 present, and when present what lstat said of it:
 *               u64 dev, u64 ino, u32 mode, u32 uid, u32 gid, u64 size,
 *               u64 mtime (ns), u64 ctime (ns),
 *   bytes plan  the run plan (jail/runplan.h).
 * The Go side encodes the deps (plancache.Deps), which only it knows. */
#ifndef JAIL_PLANCACHE_ENTRY_H
#define JAIL_PLANCACHE_ENTRY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "internal/wire/wire.h"

#define PC_MAGIC 0x4341434au /* "JCAC" */
#define PC_VERSION 1u
#define PC_MAX (16u << 20)   /* bytes; a larger entry is neither written nor read */
#define PC_NEW ".new-"       /* an entry being written, renamed into place when whole */

/* Where the cache lives (dir.c): a place (RUN for root; RUN/user/UID for
 * others, or $XDG_RUNTIME_DIR, or sessions' state directory), then the
 * state directory in it (PC_STATE; PC_CACHE in sessions'), then plans. */
#define PC_RUN "/run"
#define PC_USER "user"
#define PC_STATE "jail"
#define PC_CACHE "cache"
#define PC_PLANS "plans"

/* Sessions (session.c), where sessions.go keeps them: STATE/sessions/ID
 * holds workspace, lock and, optionally, secrets. */
#define PC_PATH_MAX 4096
#define PC_SESSION_ID_MAX 128
#define PC_SESSION_ROOT_STATE "/var/lib/jail" /* root's STATE */
#define PC_SESSION_USER_STATE ".local/state/jail" /* others': in HOME */
#define PC_SESSION_DIR "sessions"
#define PC_SESSION_WORKSPACE "workspace"
#define PC_SESSION_LOCK "lock"
#define PC_SESSION_SECRETS "secrets"

/* A key being built; bad once anything failed. */
struct pc_key {
	char *p;
	size_t len, cap;
	int bad;
};

/* pc_make_key builds what an invocation is cached under: the caller's
 * euid and egid, effective capabilities, working directory, HOME, JAIL_PROFILE_PATH, the jail
 * binary's identity, the run flags of argv (plancache_args) and, for a
 * session's run, its workspace. It returns -1 when the invocation is not
 * one to cache. */
int pc_make_key(char **argv, struct pc_key *k);

/* pc_key_free zeroes the key (the caller's HOME and paths) and frees it. */
void pc_key_free(struct pc_key *k);

/* pc_name is an entry's file name: the key's hash, 16 hex digits. */
void pc_name(const struct pc_key *k, char name[17]);

/* What decides where a caller's cache is. */
struct pc_env {
	const char *run;   /* PC_RUN but in tests */
	unsigned euid;     /* the caller, who must own every level */
	const char *xdg;   /* $XDG_RUNTIME_DIR; NULL: unset */
	const char *state; /* $JAIL_STATE_DIR; NULL: unset */
	const char *home;  /* $HOME; NULL: unset */
};

/* pc_env_self is this process's. */
void pc_env_self(struct pc_env *e);

/* The places, in the order they are tried (dir.c says when each is). */
enum { PC_AT_RUN, PC_AT_XDG, PC_AT_STATE, PC_AT_N };

/* Why a place, or a directory in it, is not used: an errno, or one of
 * these. */
#define PC_NOT_PRIVATE (-1) /* not the caller's, or others may enter it (write it: a state directory) */
#define PC_UNSET (-2)       /* XDG: the variable is unset; STATE: neither JAIL_STATE_DIR nor an absolute HOME */
#define PC_RELATIVE (-3)    /* XDG: not an absolute path */
#define PC_SAME (-4)        /* XDG: names RUN/user/UID, tried first */
#define PC_NOT_HERE (-5)    /* STATE: RUN/user exists (a login manager's host); XDG, STATE: root has RUN alone */
#define PC_PARENT_OPEN (-6) /* XDG: its parent is not root's alone, so the caller (or a jail of its) could have made it */

/* Where a caller's cache is (pc_where). */
struct pc_place {
	int at;                         /* the place used, PC_AT_*; -1: none */
	int why[PC_AT_N];               /* for each place tried and passed over, why */
	char dir[PC_AT_N][PC_PATH_MAX]; /* each place's state directory (it holds plans/); "" where there is none */
	int user_dirs;                  /* RUN/user exists (or may: it could not tell) */
	int state_why, plans_why;       /* at's state directory and plans/: 0, or why not used (ENOENT: not made yet) */
};

/* pc_cache_dir opens the cache directory, plans/, for the caller e
 * describes, making the state directory's parents (in sessions' place),
 * the state directory and plans/ when create is set; every level must be
 * the caller's and closed to everyone else, or it returns -1. */
int pc_cache_dir(const struct pc_env *e, int create);

/* pc_where says where the caller's cache is, or why it has none, making
 * nothing. */
void pc_where(const struct pc_env *e, struct pc_place *p);

/* pc_clean is Go's filepath.Clean of a rooted path into out (n bytes);
 * -1 when path is not rooted or out too small. */
int pc_clean(const char *path, char *out, size_t n);

/* pc_session_id_ok says id is one sessions.Check takes. */
int pc_session_id_ok(const char *id);

/* pc_session_state is sessions.StateDir for these values of
 * JAIL_STATE_DIR and HOME (NULL: unset) and euid; -1 where Go refuses. */
int pc_session_state(const char *state_env, const char *home, unsigned euid, char *out, size_t n);

/* pc_session_workspace is session id's workspace, STATE/sessions/ID/
 * workspace, for this caller's environment; -1 for an id or a state
 * directory Go refuses. */
int pc_session_workspace(const char *id, char *out, size_t n);

/* pc_session_open is plancache_session_open (plancache.h). */
int pc_session_open(const char *id, unsigned uid, int *lock);

/* jail-sh's settings (sh.c), from its environment (NULL: unset), and what
 * Go would find on the host. */
struct pc_sh {
	const char *profile, *session, *allow, *flags; /* JAIL_PROFILE, JAIL_SESSION, JAIL_ALLOW, JAIL_FLAGS */
	const char *cwd;   /* the working directory as Go's os.Getwd has it; read only without a session */
	const char *shell; /* "bash" or "sh" */
};

/* pc_sh_argv is the jail run jail-sh's args stand for (cmd_sh.go's
 * shArgv), as one malloc'd block; NULL where Go must say or do it. */
char **pc_sh_argv(char **args, const struct pc_sh *sh);

/* pc_getwd is Go's os.Getwd: $PWD when it names the working directory,
 * else getcwd(2); -1 where Go would take another way or fail. */
int pc_getwd(const char *pwd, char *out, size_t n);

/* One file a plan came from, as the deps hold it. */
struct pc_dep {
	const char *path;
	uint32_t present;
	uint64_t dev, ino;
	uint32_t mode, uid, gid;
	uint64_t size, mtime, ctime;
};

/* pc_dep_read reads one dep; w->bad says it was malformed. */
void pc_dep_read(struct wire *w, struct pc_dep *d);

/* pc_ns is t in nanoseconds, as the deps hold times. */
static inline uint64_t pc_ns(struct timespec t) { return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec; }

/* pc_load finds the entry for argv in the cache of the caller e
 * describes: *plan and *len are its plan, inside the returned buffer (the
 * caller's to free); NULL when there is none to use. */
unsigned char *pc_load(const struct pc_env *e, char **argv, const char **plan, size_t *len);

/* pc_store writes the entry for argv in the cache of the caller e
 * describes, atomically, then prunes the directory. It returns -1 when
 * nothing was stored. */
int pc_store(const struct pc_env *e, char **argv, const unsigned char *plan, size_t len, const char *deps, size_t dlen);

#endif
