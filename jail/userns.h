/* User namespaces, on the runner's side (userns.c): the jail's id maps,
 * and, for a root caller, the bind trees idmapped to the jail's ids. */
#ifndef JAIL_USERNS_H
#define JAIL_USERNS_H

#include <stdio.h>
#include <sys/types.h>

#include "internal/wire/err.h"
#include "jail/runplan.h"

/* userns_write_maps gives the init stage's user namespace (process pid)
 * its one uid and gid: the command's inside, the caller's (or, for root,
 * the unprivileged host ids) outside. Only the runner may: an
 * unprivileged process maps just itself. */
int userns_write_maps(pid_t pid, const struct run_plan *p, struct jerr *e);

/* userns_clone_trees clones, for a root caller, the bind sources the
 * jail's unprivileged uid may not reach, with their attributes set
 * (read-only, or idmapped from their owner), into fds[0..p->ntrees). */
int userns_clone_trees(const struct run_plan *p, int *fds, struct jerr *e);

/* userns_record writes the status record's "userns" field and its comma:
 * who the jail is on the host and the path jail took to build it, and
 * why (status.go's UserNS). */
void userns_record(FILE *f, const struct run_plan *p);

#endif
