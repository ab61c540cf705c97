/* The plan cache, as the binary's entry uses it: before the Go runtime
 * starts, replay a run planned before for exactly this invocation; in the
 * runner, once Go has planned one, keep it for the next. C, both sides:
 * the lookup runs before Go, and one language owns the key, the entries
 * and their directory. */
#ifndef JAIL_PLANCACHE_H
#define JAIL_PLANCACHE_H

#include <stddef.h>

/* plancache_arg_fn is called for each run flag (name is not
 * NUL-terminated: n bytes) and its value. */
typedef void (*plancache_arg_fn)(void *ctx, const char *name, size_t n, const char *value);

/* plancache_args walks jail's arguments as the CLI's flag parser reads
 * them: an optional "run", run flags with their values, "--", a command.
 * It returns -1 for anything else: such an invocation is Go's to read, and
 * never cached. */
int plancache_args(char **argv, plancache_arg_fn fn, void *ctx);

/* plancache_load finds the run plan cached for this invocation (argv up
 * to "--", the caller, its working directory, the jail binary): *plan and
 * *len are the plan, inside the returned buffer, which the caller frees
 * when it does not replay it (Go plans instead). NULL when there is none,
 * or it is not the caller's own, or anything it was planned from has
 * changed since. */
unsigned char *plancache_load(char **argv, const unsigned char **plan, size_t *len);

/* plancache_store keeps plan, which Go planned for this invocation, for the
 * next identical one. deps (dlen bytes) are the files it was planned from,
 * as the Go side encoded them (entry.h); none (dlen 0) when the run must
 * not be cached. A cache that cannot be written only costs speed: it says
 * nothing. */
void plancache_store(char **argv, const unsigned char *plan, size_t len, const char *deps, size_t dlen);

/* plancache_session_open opens session id for a replayed run, as
 * sessions.Open would: the state directory, reached without a symlink,
 * the caller's and writable by no one else; sessions/ and the session's
 * directory the caller's alone; its workspace a directory of uid (the
 * jail's host uid); its lock taken shared (waiting while jail sessions rm
 * or gc hold it) and still the session's once held, and no secrets file.
 * *lock is then the lock's fd, close-on-exec, to keep while the run runs.
 * -1 for anything else: a session to make, a refusal, anything unexpected;
 * Go opens it then (and says why it cannot), with nothing left held. */
int plancache_session_open(const char *id, unsigned uid, int *lock);

/* plancache_sh_argv is the jail run that jail-sh's arguments (args: what
 * follows argv[0], or "sh") stand for, as cmd_sh.go makes it from
 * JAIL_PROFILE, JAIL_SESSION, JAIL_ALLOW and JAIL_FLAGS: one malloc'd
 * block. NULL whenever Go's side could differ (a refusal to say, a
 * character it reads as Unicode, an environment Go would pass on
 * otherwise): Go rewrites it then. */
char **plancache_sh_argv(char **args);

#endif
