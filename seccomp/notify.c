/* The runner's side of the filter: the calls it hands on are answered
 * here, with the policy's errno (or let through, in audit mode), and each
 * is counted for the status record, with the first call's arguments. The
 * runner runs it: C, before the Go runtime, so a run replayed from the
 * plan cache never starts Go. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp/sc.h"

struct cond {
	uint32_t index, op;
	uint64_t value, mask;
};

struct answer {
	int32_t nr;
	uint32_t errno_, nconds;
	struct cond *conds;
};

/* One syscall's line in the report. */
struct denial {
	int32_t nr;
	unsigned long count;
	uint64_t args[6];
};

struct sc_report {
	uint32_t flags, default_errno, nanswers;
	struct answer *answers;
	struct denial *denials;
	size_t ndenials, cap;
	unsigned long total;
};

void sc_report_free(struct sc_report *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; r->answers && i < r->nanswers; i++)
		free(r->answers[i].conds);
	free(r->answers);
	free(r->denials);
	free(r);
}

/* answers_walk reads the answers (sc.h's layout) into r, or, r NULL, only
 * walks them; -1 when they are malformed (r then holds what was read, for
 * sc_report_free). */
static int answers_walk(struct wire *w, struct sc_report *r)
{
	uint32_t default_errno = wire_u32(w), n = wire_u32(w);
	/* Each answer takes at least 12 bytes of the plan: a count beyond
	 * what is left is malformed, before anything is allocated for it. */
	if (w->bad || n > 100000 || n > (size_t)(w->end - w->p) / 12)
		return -1;
	if (r) {
		r->default_errno = default_errno;
		if (!(r->answers = calloc(n + 1, sizeof *r->answers)))
			return -1;
		r->nanswers = n;
	}
	for (uint32_t i = 0; i < n && !w->bad; i++) {
		struct answer a = {0};
		struct cond conds[6];
		a.nr = (int32_t)wire_u32(w);
		a.errno_ = wire_u32(w);
		a.nconds = wire_u32(w);
		if (a.nconds > 6)
			return -1;
		for (uint32_t c = 0; c < a.nconds; c++) {
			conds[c].index = wire_u32(w);
			conds[c].op = wire_u32(w);
			conds[c].value = wire_u64(w);
			conds[c].mask = wire_u64(w);
		}
		if (!r)
			continue;
		if (!(a.conds = calloc(a.nconds + 1, sizeof *a.conds)))
			return -1;
		memcpy(a.conds, conds, a.nconds * sizeof *a.conds);
		r->answers[i] = a;
	}
	return w->bad ? -1 : 0;
}

int sc_answers_check(struct wire *w) { return answers_walk(w, NULL); }

struct sc_report *sc_report_new(struct wire *w, uint32_t flags, struct jerr *e)
{
	struct sc_report *r = calloc(1, sizeof *r);
	if (!r) {
		jerr_set(e, ENOMEM, "seccomp report");
		return NULL;
	}
	r->flags = flags;
	if (answers_walk(w, r) < 0) {
		jerr_set(e, 0, "seccomp answers: malformed");
		sc_report_free(r);
		return NULL;
	}
	return r;
}

static int holds(const struct cond *c, const uint64_t *args)
{
	uint64_t a = args[c->index < 6 ? c->index : 0];
	switch (c->op) {
	case SC_OP_EQ: return a == c->value;
	case SC_OP_NE: return a != c->value;
	case SC_OP_LT: return a < c->value;
	case SC_OP_LE: return a <= c->value;
	case SC_OP_GT: return a > c->value;
	case SC_OP_GE: return a >= c->value;
	case SC_OP_MASKED_EQ: return (a & c->mask) == c->value;
	}
	return 0;
}

/* errno_for is the policy's answer to the call: its last matching errno
 * rule, else the default. */
static int errno_for(const struct sc_report *r, int nr, const uint64_t *args)
{
	for (uint32_t i = r->nanswers; i > 0; i--) {
		const struct answer *a = &r->answers[i - 1];
		if (a->nr != nr)
			continue;
		int all = 1;
		for (uint32_t c = 0; c < a->nconds && all; c++)
			all = holds(&a->conds[c], args);
		if (all)
			return (int)a->errno_;
	}
	return r->default_errno ? (int)r->default_errno : EPERM;
}

static void note(struct sc_report *r, int nr, const uint64_t *args)
{
	r->total++;
	for (size_t i = 0; i < r->ndenials; i++)
		if (r->denials[i].nr == nr) {
			r->denials[i].count++;
			return;
		}
	if (r->ndenials == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct denial *d = realloc(r->denials, cap * sizeof *d);
		if (!d)
			return;
		r->denials = d;
		r->cap = cap;
	}
	struct denial *d = &r->denials[r->ndenials++];
	d->nr = nr;
	d->count = 1;
	memcpy(d->args, args, sizeof d->args);
}

int sc_handle(struct sc_report *r, int listener)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	memset(&req, 0, sizeof req);
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return errno == EINTR || errno == ENOENT ? 0 : -1;
	memset(&resp, 0, sizeof resp);
	resp.id = req.id;
	uint64_t args[6];
	for (int i = 0; i < 6; i++)
		args[i] = req.data.args[i];
	note(r, req.data.nr, args);
	if (r->flags & SC_AUDIT)
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	else
		resp.error = -errno_for(r, req.data.nr, args);
	/* ENOENT: the caller was killed meanwhile; nothing to answer. */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

unsigned long sc_report_count(const struct sc_report *r) { return r ? r->total : 0; }

void sc_report_json(const struct sc_report *r, FILE *f)
{
	fputc('[', f);
	for (size_t i = 0; r && i < r->ndenials; i++) {
		const struct denial *d = &r->denials[i];
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, d->nr);
		fprintf(f, "%s{\"syscall\":\"%s\",\"nr\":%d,\"count\":%lu,\"args\":[", i ? "," : "", name ? name : "?", d->nr,
			d->count);
		free(name);
		for (int a = 0; a < 6; a++)
			fprintf(f, "%s\"0x%llx\"", a ? "," : "", (unsigned long long)d->args[a]);
		fputs("]}", f);
	}
	fputc(']', f);
}
