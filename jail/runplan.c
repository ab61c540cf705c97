/* The run plan, read and passed on: the runner decodes what Go planned (the
 * hand-over memfd, or a plan the cache kept), and forwards the same bytes to
 * the init stage with a tail of what only this run knows, which the init
 * stage decodes with the same decoder. One format end to end, whose reading
 * and writing in C are all here. The runner and the init stage run this
 * before the Go runtime starts (a replayed run never starts it), so it is
 * C; every read is bounds-checked (internal/wire/wire.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jail/runplan.h"
#include "seccomp/sc.h"

/* block opens a length-prefixed block of w (wire.Writer's Begin/End) as a
 * cursor of its own. */
static struct wire block(struct wire *w)
{
	size_t n;
	const char *body = wire_bytes(w, &n);
	if (w->bad)
		return (struct wire){.bad = 1};
	return (struct wire){.p = (const unsigned char *)body, .end = (const unsigned char *)body + n};
}

/* whole reports whether a block was read to its end and no further. */
static int whole(const struct wire *b) { return !b->bad && b->p == b->end; }

/* skip_strs passes over a count and that many strings. */
static void skip_strs(struct wire *w)
{
	for (uint32_t n = wire_u32(w); n > 0 && !w->bad; n--)
		wire_str(w);
}

static int decode_trees(struct wire *w, struct run_plan *p)
{
	p->ntrees = wire_u32(w);
	if (w->bad || p->ntrees > RUN_MAX_TREES)
		return -1;
	p->trees = calloc(p->ntrees ? p->ntrees : 1, sizeof *p->trees);
	if (!p->trees)
		return -1;
	for (uint32_t i = 0; i < p->ntrees; i++) {
		p->trees[i].path = wire_str(w);
		p->trees[i].flags = wire_u32(w);
		p->trees[i].owner_uid = wire_u32(w);
		p->trees[i].owner_gid = wire_u32(w);
	}
	return w->bad ? -1 : 0;
}

/* decode_proc reads the process section's fixed part (flags, ids,
 * hostname, working directory), a block of its own. */
static int decode_proc(struct wire *w, struct run_plan *p)
{
	struct wire b = block(w);
	p->proc_flags = wire_u32(&b);
	uint32_t uid = wire_u32(&b), gid = wire_u32(&b);
	p->hostname = wire_str(&b);
	p->cwd = wire_str(&b);
	return whole(&b) && uid == p->uid && gid == p->gid ? 0 : -1;
}

/* decode_disk reads the disk limit, the reserve and the writable binds,
 * which stay in the buffer (disk_binds walks them). */
static int decode_disk(struct wire *w, struct run_plan *p)
{
	p->disk_limit = wire_u64(w);
	p->disk_reserve = wire_u64(w);
	p->disk_percent = wire_u32(w);
	p->disk_binds = *w;
	uint32_t n = wire_u32(w);
	if (w->bad || n % 2 || n > 2 * RUN_MAX_TREES || p->disk_percent > 90)
		return -1;
	p->ndisk = n / 2;
	for (uint32_t i = 0; i < n; i++)
		wire_str(w);
	p->session_disk = wire_u64(w);
	p->session_dir = wire_str(w);
	return w->bad || (p->session_disk && p->session_dir[0] != '/') ? -1 : 0;
}

/* decode_rlimits reads the rlimits block: u32 count, then the entries. */
static int decode_rlimits(struct wire *w, struct run_plan *p)
{
	struct wire b = block(w);
	p->nrlimits = wire_u32(&b);
	if (b.bad || p->nrlimits >= RUN_MAX_RLIMITS)
		return -1;
	p->rlimits = calloc(p->nrlimits ? p->nrlimits : 1, sizeof *p->rlimits);
	if (!p->rlimits)
		return -1;
	for (uint32_t i = 0; i < p->nrlimits; i++) {
		p->rlimits[i].resource = wire_u32(&b);
		p->rlimits[i].soft = wire_u64(&b);
		p->rlimits[i].hard = wire_u64(&b);
	}
	return whole(&b) ? 0 : -1;
}

int runplan_decode(const unsigned char *buf, size_t len, struct run_plan *p, struct jerr *e)
{
	struct wire w = {.p = buf, .end = buf + len};
	memset(p, 0, sizeof *p);
	p->raw = buf;
	p->raw_len = len;
	if (wire_u32(&w) != RUNPLAN_MAGIC || wire_u32(&w) != RUNPLAN_VERSION)
		return jerr_set(e, 0, "run plan: not one of this version");
	p->time_limit_ns = wire_u64(&w);
	p->flags = wire_u32(&w);
	p->host_uid = wire_u32(&w);
	p->host_gid = wire_u32(&w);
	p->uid = wire_u32(&w);
	p->gid = wire_u32(&w);
	p->profile = wire_str(&w);
	p->profile_hash = wire_str(&w);
	if (decode_trees(&w, p) < 0)
		goto malformed;
	if ((p->ntrees && (!(p->flags & RUN_ROOT) || (p->flags & RUN_NO_ADMIN))) ||
	    ((p->flags & RUN_NO_ADMIN) && !(p->flags & RUN_ROOT)) ||
	    ((p->flags & RUN_ROOT) && (p->host_uid == 0 || p->host_gid == 0))) {
		runplan_free(p);
		return jerr_set(e, 0, "run plan: inconsistent (trees or host root)");
	}
	p->mounts = wire_bytes(&w, &p->mounts_len);
	if (decode_proc(&w, p) < 0)
		goto malformed;
	p->keep = w;
	skip_strs(&w);
	p->set = w;
	skip_strs(&w);
	if (decode_rlimits(&w, p) < 0)
		goto malformed;
	cg_plan_decode(&w, &p->cg);
	p->max_output = wire_u64(&w);
	if (decode_disk(&w, p) < 0)
		goto malformed;
	p->limits_json = wire_str(&w);
	p->net_mode = wire_str(&w);
	p->net_config = wire_str(&w);
	p->audit_path = wire_str(&w);
	p->session = wire_str(&w);
	p->version = wire_str(&w);
	p->secrets = wire_str(&w);
	p->sc_flags = wire_u32(&w);
	p->sc_name = wire_str(&w);
	p->sc_bpf = wire_bytes(&w, &p->sc_len);
	p->sc_answers = w;
	/* The answers end the plan: nothing may follow them. */
	if (!w.bad && sc_answers_check(&w) == 0 && w.p == w.end)
		return 0;
malformed:
	runplan_free(p);
	return jerr_set(e, 0, "run plan: malformed");
}

void runplan_free(struct run_plan *p)
{
	free(p->trees);
	free(p->rlimits);
	p->trees = NULL;
	p->rlimits = NULL;
	p->ntrees = p->nrlimits = 0;
}

int handoff_read(int fd, struct handoff *h, struct jerr *e)
{
	struct stat st;
	int seals;
	memset(h, 0, sizeof *h);
	/* Sealed against writes: the Go side's own memfd, not some fd (one
	 * that cannot be sealed fails F_GET_SEALS: -1, every bit set). */
	if (fd < 3 || fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size > (64 << 20) ||
	    (seals = fcntl(fd, F_GET_SEALS)) < 0 || !(seals & F_SEAL_WRITE) || !(h->buf = malloc((size_t)st.st_size)) ||
	    pread(fd, h->buf, (size_t)st.st_size, 0) != st.st_size) {
		free(h->buf);
		h->buf = NULL;
		return jerr_set(e, 0, "the runner got no plan");
	}
	close(fd);
	struct wire w = {.p = h->buf, .end = h->buf + st.st_size};
	uint32_t magic = wire_u32(&w);
	h->started = wire_u64(&w);
	h->status_to = wire_str(&w);
	h->plan = (const unsigned char *)wire_bytes(&w, &h->plan_len);
	h->deps = wire_bytes(&w, &h->deps_len);
	if (w.bad || w.p != w.end || magic != HANDOFF_MAGIC) {
		free(h->buf);
		h->buf = NULL;
		return jerr_set(e, 0, "the runner got a malformed plan");
	}
	return 0;
}

static const char *env_lookup(char **envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp;
	return NULL;
}

/* set_has reports whether the plan's own variables (set) name name. */
static int set_has(struct wire set, const char *name)
{
	size_t n = strlen(name);
	for (uint32_t c = wire_u32(&set); c > 0 && !set.bad; c--) {
		const char *kv = wire_str(&set);
		if (strncmp(kv, name, n) == 0 && kv[n] == '=')
			return 1;
	}
	return 0;
}

/* put_env writes the command's environment: the kept host variables that
 * are set, then the plan's own; nothing else of the host's. In tty mode
 * the caller's TERM too, whatever the plan says of it: the terminal is
 * the caller's, and only the caller knows what it is. */
static void put_env(struct wire_out *w, const struct run_plan *p, char **environ_, int tty)
{
	struct wire keep = p->keep, set = p->set;
	const char *kept[1024], *term = tty ? env_lookup(environ_, "TERM") : NULL;
	uint32_t nkept = 0, nset = 0;
	for (uint32_t c = wire_u32(&keep); c > 0 && !keep.bad; c--) {
		const char *name = wire_str(&keep);
		const char *kv = env_lookup(environ_, name);
		if (kv && !set_has(p->set, name) && !(term && strcmp(name, "TERM") == 0) && nkept < 1024)
			kept[nkept++] = kv;
	}
	for (uint32_t c = wire_u32(&set); c > 0 && !set.bad; c--)
		if (!(term && strncmp(wire_str(&set), "TERM=", 5) == 0))
			nset++;
	wire_put_u32(w, nkept + nset + (term != NULL));
	for (uint32_t i = 0; i < nkept; i++)
		wire_put_bytes(w, kept[i], strlen(kept[i]));
	set = p->set;
	for (uint32_t c = wire_u32(&set); c > 0 && !set.bad; c--) {
		size_t n;
		const char *kv = wire_bytes(&set, &n);
		if (!(term && strncmp(kv, "TERM=", 5) == 0))
			wire_put_bytes(w, kv, n);
	}
	if (term)
		wire_put_bytes(w, term, strlen(term));
}

/* put_plan writes the plan as wire_put_bytes would, but for the network
 * helper's configuration, which goes empty: it holds bound credentials'
 * real values and the run CA's key, and is the runner's alone. The init
 * stage, the jail's PID 1 and the command (until its exec) never hold it. */
static void put_plan(struct wire_out *w, const struct run_plan *p)
{
	const unsigned char *cfg = (const unsigned char *)p->net_config;
	size_t n = strlen(p->net_config), at = (size_t)(cfg - p->raw);
	/* The string is [u32 n][n bytes][NUL] at at - 4; it becomes [u32 0][NUL]. */
	wire_put_u32(w, (uint32_t)(p->raw_len - n));
	wire_put(w, p->raw, at - 4);
	wire_put_u32(w, 0);
	wire_put(w, cfg + n, p->raw_len - at - n);
	wire_put(w, "", 1);
}

/* put_body writes what the frame's length counts: the plan, the tail. */
static void put_body(struct wire_out *w, const struct run_plan *p, char **argv, char **environ_, uint32_t umask,
		     const struct winsize *tty)
{
	put_plan(w, p);
	uint32_t argc = 0;
	while (argv[argc])
		argc++;
	wire_put_u32(w, argc);
	for (uint32_t i = 0; i < argc; i++)
		wire_put_bytes(w, argv[i], strlen(argv[i]));
	put_env(w, p, environ_, tty != NULL);
	wire_put_u32(w, umask);
	struct winsize none = {0};
	const struct winsize *ws = tty ? tty : &none;
	wire_put_u32(w, tty != NULL);
	wire_put_u32(w, ws->ws_row);
	wire_put_u32(w, ws->ws_col);
	wire_put_u32(w, ws->ws_xpixel);
	wire_put_u32(w, ws->ws_ypixel);
}

int forward_encode(const struct run_plan *p, char **argv, char **environ_, uint32_t umask, const struct winsize *tty,
		   unsigned char **out, size_t *len, struct jerr *e)
{
	struct wire_out count = {0};
	put_body(&count, p, argv, environ_, umask, tty);
	if (count.n > FORWARD_MAX)
		return jerr_set(e, E2BIG, "plan: the command, its environment and the plan");
	struct wire_out w = {.p = malloc(4 + count.n + 1)};
	if (!w.p)
		return jerr_set(e, ENOMEM, "plan");
	wire_put_u32(&w, (uint32_t)count.n);
	put_body(&w, p, argv, environ_, umask, tty);
	/* Not in the frame: the init stage reads it before it starts PID 1,
	 * and the runner sends it once the jail is in its cgroup. */
	wire_put(&w, "C", 1);
	*out = w.p;
	*len = w.n;
	return 0;
}

/* strv reads a count and that many strings into a NULL-terminated array
 * pointing into the buffer; NULL when malformed. Each string takes at least
 * 5 bytes: a count beyond what is left is refused before any allocation. */
static char **strv(struct wire *w)
{
	uint32_t n = wire_u32(w);
	if (w->bad || n > (size_t)(w->end - w->p) / 5)
		return NULL;
	char **v = calloc((size_t)n + 1, sizeof *v);
	for (uint32_t i = 0; v && i < n; i++)
		v[i] = (char *)wire_str(w);
	return v;
}

int forward_decode(const unsigned char *buf, size_t len, struct forwarded *f, struct jerr *e)
{
	struct wire w = {.p = buf, .end = buf + len};
	size_t plen;
	memset(f, 0, sizeof *f);
	const unsigned char *plan = (const unsigned char *)wire_bytes(&w, &plen);
	if (w.bad)
		return jerr_set(e, 0, "plan: malformed");
	if (runplan_decode(plan, plen, &f->plan, e) < 0)
		return -1;
	f->argv = strv(&w);
	f->envp = strv(&w);
	f->umask = wire_u32(&w);
	f->tty = wire_u32(&w);
	uint32_t size[4];
	for (int i = 0; i < 4; i++)
		size[i] = wire_u32(&w);
	f->ws = (struct winsize){.ws_row = (unsigned short)size[0], .ws_col = (unsigned short)size[1],
				 .ws_xpixel = (unsigned short)size[2], .ws_ypixel = (unsigned short)size[3]};
	int sized = size[0] <= 0xffff && size[1] <= 0xffff && size[2] <= 0xffff && size[3] <= 0xffff;
	if (whole(&w) && f->argv && f->argv[0] && f->envp && f->tty <= 1 && sized)
		return 0;
	forward_free(f);
	return jerr_set(e, 0, "plan: malformed command or environment");
}

void forward_free(struct forwarded *f)
{
	runplan_free(&f->plan);
	free(f->argv);
	free(f->envp);
	f->argv = f->envp = NULL;
}
