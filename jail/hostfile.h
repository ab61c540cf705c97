/* Opening a host path the runner writes for its caller (hostfile.c). */
#ifndef JAIL_HOSTFILE_H
#define JAIL_HOSTFILE_H

#include <sys/types.h>

/* hostfile_open is openat(AT_FDCWD, path, flags, mode) that follows only
 * symbolic links root owns on the way, and none as the file itself
 * (ELOOP). */
int hostfile_open(const char *path, int flags, mode_t mode);

#endif
