/* The C side of the seccomp package: the init stage loads the compiled
 * program just before exec (load.c); the runner answers the calls the
 * filter hands it, and keeps the report (notify.c). compile.go makes the
 * program and the answers. */
#ifndef JAIL_SECCOMP_H
#define JAIL_SECCOMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "internal/wire/err.h"
#include "internal/wire/wire.h"

/* Flags of the seccomp part of a plan. */
#define SC_LOAD 1u   /* load a filter (every jail, unless its policy is none) */
#define SC_NOTIFY 2u /* it hands calls to the runner: load with a listener */
#define SC_AUDIT 4u  /* the runner lets handed calls through, reporting them */
#define SC_COMPILED 8u /* planning compiled it (the program cache missed) */
#define SC_QUIET 16u   /* refusals answered in the kernel, not reported */

/* How an answer's condition compares a call's argument (policy.go's Op). */
enum { SC_OP_EQ = 1, SC_OP_NE, SC_OP_LT, SC_OP_LE, SC_OP_GT, SC_OP_GE, SC_OP_MASKED_EQ };

/* sc_load loads the BPF program (struct sock_filter[]) on the calling
 * thread; with SC_NOTIFY the listener is sent over the socket sock. It
 * must be the last setup step before exec. */
int sc_load(uint32_t flags, const void *bpf, size_t len, int sock, struct jerr *e);

/* The runner's side. The listener comes over a unix socket
 * (internal/linux/fdpass.h). */
struct sc_report;

/* sc_report_new reads the answers from the plan (u32 default errno, u32
 * count, then each: i32 nr, u32 errno, u32 conds, conds of u32 index, u32
 * op, u64 value, u64 mask). */
struct sc_report *sc_report_new(struct wire *answers, uint32_t flags, struct jerr *e);

/* sc_answers_check walks the answers as sc_report_new reads them, without
 * keeping them: -1 when they are malformed. */
int sc_answers_check(struct wire *answers);

/* sc_report_free frees what sc_report_new made. */
void sc_report_free(struct sc_report *r);

/* sc_handle answers one handed call waiting on the listener; it returns
 * -1 once the listener is gone (every process of the jail has exited). */
int sc_handle(struct sc_report *r, int listener);

/* sc_report_json writes the report as a JSON array of
 * {"syscall","count","args"}, or [] when nothing was denied. */
void sc_report_json(const struct sc_report *r, FILE *f);

/* sc_report_count is how many calls were denied (or audited). */
unsigned long sc_report_count(const struct sc_report *r);

#endif
