/* The C side's errors: one line, "what failed: why". The init stage sends
 * it to the runner over the error pipe (jail/init.c's stage_error), whose
 * first byte says what kind of failure it is, so the runner can pick the
 * exit status; the runner prints its own (jail/report.c). C, for the code
 * that runs before the Go runtime. */
#ifndef JAIL_ERR_H
#define JAIL_ERR_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Kinds of failure, the first byte of a message on the error pipe. */
#define JERR_SETUP 'E'      /* building the jail failed: exit 125 */
#define JERR_NOTFOUND 'N'   /* the command does not exist: exit 127 */
#define JERR_NOEXEC 'X'     /* the command exists but cannot run: exit 126 */
/* Not a failure, and before any: PID 1 went on in the caller's session
 * keyring, as the profile allows (session_keyring = "best-effort"); the
 * runner says the line and the record says so. */
#define JERR_NOTE_KEYRING 'K'

struct jerr {
	char kind;
	char msg[1024];
};

/* jerr_set formats "what: strerror(err)"; err 0 leaves the reason out. It
 * returns -1 so callers can write `return jerr_set(...)`. */
static inline __attribute__((format(printf, 3, 4))) int jerr_set(struct jerr *e, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (err && (size_t)n < sizeof e->msg)
		snprintf(e->msg + n, sizeof e->msg - (size_t)n, ": %s", strerror(err));
	e->kind = JERR_SETUP;
	return -1;
}

#endif
