/* The plan cache's C side: finding, checking and loading a cached run plan
 * before the Go runtime starts. cache.go writes the entries. */
#ifndef JAIL_PLANCACHE_H
#define JAIL_PLANCACHE_H

#include <stddef.h>

/* plancache_arg_fn is called for each run flag (name is not
 * NUL-terminated: n bytes) and its value. */
typedef void (*plancache_arg_fn)(void *ctx, const char *name, size_t n, const char *value);

/* plancache_args walks jail's arguments as the Go side's flag parser does
 * (args.go): an optional "run", run flags with their values, "--", a
 * command. It returns -1 for anything else: such an invocation is Go's to
 * read, and never cached. */
int plancache_args(char **argv, plancache_arg_fn fn, void *ctx);

/* plancache_load returns the run plan cached for this invocation (argv up
 * to "--", the caller, its working directory, the jail binary), or NULL
 * when there is none, or it is not the caller's own, or anything it was
 * planned from has changed since. *len is the plan's length. */
unsigned char *plancache_load(char **argv, size_t *len);

#endif
