/* The plan cache's C side: finding, checking and loading a cached run plan
 * before the Go runtime starts. cache.go writes the entries. */
#ifndef JAIL_PLANCACHE_H
#define JAIL_PLANCACHE_H

#include <stddef.h>

/* plancache_load returns the run plan cached for this invocation (argv up
 * to "--", the caller, its working directory, the jail binary), or NULL
 * when there is none, or it is not the caller's own, or anything it was
 * planned from has changed since. *len is the plan's length. */
unsigned char *plancache_load(char **argv, size_t *len);

#endif
