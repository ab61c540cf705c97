/* jail-sh's spelling of the run flags jail's messages suggest (shhint.c). */
#ifndef JAIL_SHHINT_H
#define JAIL_SHHINT_H

#include <stddef.h>

/* JAIL_SH_ENV is set, by jail sh's rewrite (plancache/sh.c's caller in
 * entry.c, and cmd_sh.go), in the environment of the run it makes: that
 * run's messages are read by a jail-sh user, who gives flags through
 * JAIL_ALLOW and JAIL_FLAGS. Not a stage variable (_JAIL_*, which Go
 * keeps from the runner): it changes words only. */
#define JAIL_SH_ENV "JAIL_SH"

/* sh_hints copies line to out (size bytes, NUL included, cut to fit),
 * each suggestion of a run flag ("allow it with --allow HOST",
 * "--limits-mode best-effort") spelled as jail-sh takes it
 * ("JAIL_ALLOW=HOST", "JAIL_FLAGS=..."). 2 * strlen(line) + 1 bytes always
 * fit. */
void sh_hints(const char *line, char *out, size_t size);

#endif
