/* The caller's keys, for session_keyring = "best-effort" (keyring.c). */
#ifndef JAIL_KEYRING_H
#define JAIL_KEYRING_H

#include "internal/wire/err.h"

/* keyring_filtered says whether keyctl is refused here (a seccomp filter,
 * or a kernel without keyrings): where it is not, a jail always gets a
 * session keyring of its own. */
int keyring_filtered(void);

/* keyring_caller_bare is 0 when the caller can see no key but keyrings
 * in /proc/keys (or the kernel has none); -1 with e set when it can, or
 * when that cannot be told. */
int keyring_caller_bare(struct jerr *e);

#endif
