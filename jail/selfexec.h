/* Starting this binary again as another of its stages (selfexec.c; the
 * stages are listed in entry.c): the allowlist proxy (proxyctl.c). The
 * init stage's fork (stagestart.c) moves its fds with the same helpers. */
#ifndef JAIL_SELFEXEC_H
#define JAIL_SELFEXEC_H

#include <signal.h>
#include <sys/types.h>

/* fds_above copies each of the n fds in src above floor, close-on-exec,
 * into high: moving them down onto their numbers in the child then
 * clobbers none. -1 (errno) with none of the copies left open. */
int fds_above(const int *src, int n, int floor, int *high);

/* selfexec_fds moves, in the child, high[i] onto fd base+i. */
int selfexec_fds(const int *high, int n, int base);

/* selfexec, in the child (of a fork, or a vfork: it touches no memory of
 * the parent's), empties the signal mask, sets the signals in dfl back to
 * their default, has the child killed when parent dies (it exits at once
 * if the parent is gone already), and executes this binary as the stage
 * in envp. It returns only if the exec fails. */
void selfexec(char *const argv[], char *const envp[], const sigset_t *dfl, pid_t parent);

#endif
