/* The runner: jail's own process once a run is planned. It starts the init
 * stage, gives its user namespace the id maps, sends it the plan, then
 * waits for the command, passing on signals, enforcing the wall-time limit,
 * and reports: exit status, one line on stderr, the status record. It is C
 * that runs before the Go runtime, so a run replayed from the plan cache
 * never starts Go. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal/linux/fdpass.h"
#include "internal/linux/file.h"
#include "jail/hostfile.h"
#include "jail/json.h"
#include "jail/proxy.h"
#include "jail/runplan.h"
#include "jail/stage.h"
#include "mount/mount.h"
#include "seccomp/sc.h"

uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int runplan_decode(const unsigned char *buf, size_t len, struct run_plan *p, struct jerr *e)
{
	struct wire w = {.p = buf, .end = buf + len};
	memset(p, 0, sizeof *p);
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
	p->ntrees = wire_u32(&w);
	if (w.bad || p->ntrees > 4096)
		return jerr_set(e, 0, "run plan: malformed");
	p->trees = calloc(p->ntrees ? p->ntrees : 1, sizeof *p->trees);
	if (!p->trees)
		return jerr_set(e, ENOMEM, "run plan");
	for (uint32_t i = 0; i < p->ntrees; i++) {
		p->trees[i].path = wire_str(&w);
		p->trees[i].flags = wire_u32(&w);
		p->trees[i].owner_uid = wire_u32(&w);
		p->trees[i].owner_gid = wire_u32(&w);
	}
	if (!w.bad && ((p->ntrees && !(p->flags & RUN_ROOT)) ||
		       ((p->flags & RUN_ROOT) && (p->host_uid == 0 || p->host_gid == 0))))
		return jerr_set(e, 0, "run plan: inconsistent (trees or host root)");
	p->mounts = wire_bytes(&w, &p->mounts_len);
	p->proc_prefix = wire_bytes(&w, &p->proc_prefix_len);
	p->keep = w;
	for (int l = 0; l < 2; l++) {
		if (l == 1)
			p->set = w;
		for (uint32_t n = wire_u32(&w); n > 0 && !w.bad; n--)
			wire_str(&w);
	}
	p->rlimits = wire_bytes(&w, &p->rlimits_len);
	cg_plan_decode(&w, &p->cg);
	p->max_output = wire_u64(&w);
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
	if (w.bad)
		return jerr_set(e, 0, "run plan: malformed");
	return 0;
}

void runplan_free(struct run_plan *p)
{
	free(p->trees);
	p->trees = NULL;
}

/* A growing buffer for the init stage's plan. */
struct buf {
	unsigned char *p;
	size_t len, cap;
	int bad;
};

static void put(struct buf *b, const void *data, size_t n)
{
	if (b->bad)
		return;
	if (b->len + n > b->cap) {
		size_t cap = (b->cap ? b->cap * 2 : 4096) + n;
		unsigned char *p = realloc(b->p, cap);
		if (!p) {
			b->bad = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void put_u32(struct buf *b, uint32_t v) { put(b, &v, sizeof v); }

/* put_str writes a string as wire.Writer.Str does: length, bytes, NUL. */
static void put_str(struct buf *b, const char *s, size_t n)
{
	put_u32(b, (uint32_t)n);
	put(b, s, n);
	put(b, "", 1);
}

static const char *env_lookup(char **envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp;
	return NULL;
}

/* set_names_has reports whether env.set names the variable name. */
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
 * are set, then the profile's own; nothing else of the host's. */
static void put_env(struct buf *b, const struct run_plan *p, char **environ_)
{
	struct wire keep = p->keep, set = p->set;
	const char *kept[1024];
	uint32_t nkept = 0;
	for (uint32_t c = wire_u32(&keep); c > 0 && !keep.bad; c--) {
		const char *name = wire_str(&keep);
		const char *kv = env_lookup(environ_, name);
		if (kv && !set_has(p->set, name) && nkept < 1024)
			kept[nkept++] = kv;
	}
	uint32_t nset = wire_u32(&set);
	put_u32(b, nkept + nset);
	for (uint32_t i = 0; i < nkept; i++)
		put_str(b, kept[i], strlen(kept[i]));
	for (uint32_t i = 0; i < nset && !set.bad; i++) {
		size_t n;
		const char *kv = wire_bytes(&set, &n);
		put_str(b, kv, n);
	}
}

/* init_plan is the plan the init stage reads (init.c): framed, header,
 * mount section, process section with this run's command. */
static struct buf init_plan(const struct run_plan *p, char **argv, char **environ_)
{
	struct buf b = {0};
	put_u32(&b, 0); /* the frame: the length, filled in below */
	put_u32(&b, PLAN_MAGIC);
	put_u32(&b, PLAN_VERSION);
	put_u32(&b, p->ntrees);
	put_u32(&b, 1);
	put_str(&b, p->mounts, p->mounts_len);
	put_u32(&b, 2);
	size_t section = b.len;
	put_u32(&b, 0);
	put(&b, p->proc_prefix, p->proc_prefix_len);
	uint32_t argc = 0;
	while (argv[argc])
		argc++;
	put_u32(&b, argc);
	for (uint32_t i = 0; i < argc; i++)
		put_str(&b, argv[i], strlen(argv[i]));
	put_env(&b, p, environ_);
	put(&b, p->rlimits, p->rlimits_len);
	mode_t um = umask(022);
	umask(um);
	put_u32(&b, (uint32_t)um);
	put_u32(&b, p->sc_flags);
	put_str(&b, p->sc_bpf, p->sc_len);
	if (!b.bad) {
		uint32_t n = (uint32_t)(b.len - section - 4);
		memcpy(b.p + section, &n, sizeof n);
		put(&b, "", 1);
		n = (uint32_t)(b.len - 4);
		memcpy(b.p, &n, sizeof n);
		/* Not in the frame: the init stage reads it before it starts
		 * PID 1, and the runner sends it once the jail is in its cgroup. */
		put(&b, "C", 1);
	}
	return b;
}

/* The run as it went, for the exit status, the stderr line and the record. */
struct outcome {
	struct sc_report *denied;      /* the calls the filter refused (or, audited, let through) */
	int have_status, exited, code; /* from PID 1's status record */
	int timed_out;
	int pids_killed;               /* jail ended the run: the process limit was hit */
	struct cg_usage cg;            /* what the run's cgroup saw */
	int have_cg;
	int audit_fd;                  /* the audit log, open for appending (0: none; never stdin) */
	char **argv;                   /* the command, for the audit log */
	struct cg_run *cgr;            /* the run's cgroup, removed when jail ends */
	struct proxy *proxy;           /* the allowlist proxy, and its report */
	uint64_t out_dropped[2];       /* bytes of stdout, stderr past --max-output */
	uint64_t out_lost;             /* bytes the caller's end did not take (closed, or not read) */
	int out_closed[2];             /* the caller closed its end of stdout, stderr */
	char err[1100];                /* the init stage's error line */
	const char *fatal;             /* the runner's own failure, which ended the jail */
	const char *status_to;         /* where the status record goes, for messages */
	uint64_t setup_ns, wall_ns;
	struct rusage ru;
};

static double ms(uint64_t ns) { return (double)(ns / 1000) / 1000.0; }
static double tv_ms(struct timeval tv) { return (double)tv.tv_sec * 1000.0 + (double)tv.tv_usec / 1000.0; }

/* write_status writes the --status-json record, as status.go's Status. */
/* on_alarm only interrupts: a write that would block past its time
 * returns (SA_RESTART is not set). */
static void on_alarm(int sig) { (void)sig; }

/* bounded_write writes to fd without ever blocking jail for long: a
 * socket gets MSG_DONTWAIT; anything else an alarm 100 ms on, which
 * interrupts a write the caller's end holds up (a terminal stopped with
 * TCOOFF, a full pipe jail could not reopen non-blocking). */
static ssize_t bounded_write(int fd, int sock, const void *buf, size_t n)
{
	if (sock)
		return send(fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	struct itimerval on = {.it_value = {0, 100000}}, off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &on, NULL);
	ssize_t w = write(fd, buf, n);
	int err = errno;
	setitimer(ITIMER_REAL, &off, NULL);
	errno = w < 0 && err == EINTR ? EAGAIN : err;
	return w;
}

/* write_out writes all of buf to fd, for up to about two seconds, waiting
 * for the caller's end to take it; 0 once it did, else -1 (errno; ETIMEDOUT:
 * the caller's end did not take it in time). */
static int write_out(int fd, int sock, const char *buf, size_t n)
{
	uint64_t until = monotonic_ns() + 2000000000ull;
	while (n > 0) {
		if (monotonic_ns() >= until) {
			errno = ETIMEDOUT;
			return -1;
		}
		ssize_t w = bounded_write(fd, sock, buf, n);
		if (w > 0) {
			buf += w, n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		struct pollfd pf = {.fd = fd, .events = POLLOUT};
		poll(&pf, 1, 100);
	}
	return 0;
}

/* status_record is the --status-json record, as status.go's Status: one
 * line, malloc'd (NULL when memory ran out). */
static char *status_record(const struct run_plan *p, const struct outcome *o, int code, int sig, const char *err)
{
	char *mem = NULL;
	size_t memlen = 0;
	FILE *f = open_memstream(&mem, &memlen);
	if (!f)
		return NULL;
	fprintf(f, "{\"version\":1,\"exit_code\":%d,\"signal\":%d,", code, sig);
	const char *abbrev = sig ? sigabbrev_np(sig) : NULL;
	if (abbrev)
		fprintf(f, "\"signal_name\":\"SIG%s\",", abbrev);
	/* The verdict: which limit ended or hurt the run. */
	const struct cg_usage *u = &o->cg;
	fprintf(f, "\"timed_out\":%s,\"oom_killed\":%s,\"pids_limit_hit\":%s,\"cpu_time_exceeded\":%s,"
		   "\"file_too_large\":%s,\"output_truncated\":%s,",
		o->timed_out ? "true" : "false", o->have_cg && u->oom_kills > 0 ? "true" : "false",
		o->pids_killed || (o->have_cg && u->pids_max > 0) ? "true" : "false", sig == SIGXCPU ? "true" : "false",
		sig == SIGXFSZ ? "true" : "false", o->out_dropped[0] || o->out_dropped[1] ? "true" : "false");
	/* CPU from the cgroup when there is one: it counts every process
	 * of the jail, to the microsecond. */
	double user = tv_ms(o->ru.ru_utime), sys = tv_ms(o->ru.ru_stime);
	if (o->have_cg && u->cpu_user_us >= 0 && u->cpu_system_us >= 0)
		user = (double)u->cpu_user_us / 1000.0, sys = (double)u->cpu_system_us / 1000.0;
	fprintf(f, "\"wall_ms\":%.3f,\"setup_ms\":%.3f,\"cpu_user_ms\":%.3f,\"cpu_system_ms\":%.3f,", ms(o->wall_ns),
		ms(o->setup_ns), user, sys);
	if (o->have_cg) {
		/* null: this kernel does not tell (pids.peak is 6.1+, ...). */
		const struct {
			const char *key;
			int64_t v;
		} usage[] = {{"oom_kills", u->oom_kills},
			     {"memory_peak_bytes", u->memory_peak},
			     {"pids_peak", u->pids_peak},
			     {"cpu_throttled_periods", u->cpu_throttled}};
		for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
			if (usage[i].v < 0)
				fprintf(f, "\"%s\":null,", usage[i].key);
			else
				fprintf(f, "\"%s\":%lld,", usage[i].key, (long long)usage[i].v);
		}
	}
	if (p->max_output)
		fprintf(f,
			"\"output_dropped\":{\"stdout\":%llu,\"stderr\":%llu,\"undelivered\":%llu},"
			"\"output_closed\":{\"stdout\":%s,\"stderr\":%s},",
			(unsigned long long)o->out_dropped[0], (unsigned long long)o->out_dropped[1],
			(unsigned long long)o->out_lost, o->out_closed[0] ? "true" : "false", o->out_closed[1] ? "true" : "false");
	if (p->secrets[0])
		fprintf(f, "\"secrets\":%s,", p->secrets);
	fprintf(f, "\"limits\":%s,\"network\":", p->limits_json[0] ? p->limits_json : "{}");
	json_str(f, p->net_mode[0] ? p->net_mode : "none");
	fputc(',', f);
	/* The proxy's report: JSON it made itself, or nothing to say. */
	if (strcmp(p->net_mode, "allowlist") == 0) {
		fprintf(f, "%s,", o->proxy && o->proxy->last[0] ? o->proxy->last : "\"network_denied\":[],\"network_allowed\":[]");
		if (o->proxy && o->proxy->failed)
			fputs("\"network_proxy_failed\":true,", f);
		/* A report too long to keep (the proxy bounds its own; this
		 * says so should that fail), never a silent older one. */
		if (o->proxy && o->proxy->incomplete)
			fputs("\"network_report_incomplete\":true,", f);
	}
	/* jail's own CPU, outside the jail's limits: answering refused
	 * calls costs it, and a command that floods them shows here. */
	struct rusage self;
	if (getrusage(RUSAGE_SELF, &self) == 0)
		fprintf(f, "\"jail_cpu_ms\":%.3f,", tv_ms(self.ru_utime) + tv_ms(self.ru_stime));
	fputs("\"seccomp\":", f);
	json_str(f, (p->sc_flags & SC_LOAD) ? p->sc_name : "none");
	/* A replayed plan compiled nothing, whatever it says of its first run. */
	if (p->sc_flags & SC_QUIET)
		fputs(",\"seccomp_reported\":false", f);
	fprintf(f, ",\"seccomp_audit\":%s,\"seccomp_compiled\":%s,\"denied\":", (p->sc_flags & SC_AUDIT) ? "true" : "false",
		(p->sc_flags & SC_COMPILED) && !p->cached ? "true" : "false");
	sc_report_json(o->denied, f);
	fprintf(f, ",\"plan_cached\":%s,\"profile\":", p->cached ? "true" : "false");
	json_str(f, p->profile);
	fputs(",\"profile_hash\":", f);
	json_str(f, p->profile_hash);
	if (err && *err) {
		fputs(",\"error\":", f);
		json_str(f, err);
	}
	fputs("}\n", f);
	if (fclose(f) != 0) {
		free(mem);
		return NULL;
	}
	return mem;
}

/* write_status writes the record without blocking on a caller's end for
 * long (fd:N may be a terminal or a pipe); -1 (errno) when it could not be
 * written whole: a full disk, a reader that went away or never read. */
static int write_status(int fd, const char *rec)
{
	struct stat st;
	int sock = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
	int r = -1;
	if (!rec)
		errno = ENOMEM;
	else
		r = write_out(fd, sock, rec, strlen(rec));
	int err = errno;
	if (close(fd) < 0 && r == 0 && errno != EINTR)
		r = -1, err = errno;
	errno = err;
	return r;
}

/* audit_line is the audit log's record of the run: who ran what, where,
 * when, and the status record's fields. */
static char *audit_line(const struct run_plan *p, const struct outcome *o, const char *rec)
{
	char *mem = NULL;
	size_t memlen = 0;
	FILE *f = open_memstream(&mem, &memlen);
	if (!f || !rec)
		return NULL;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct tm tm;
	gmtime_r(&now.tv_sec, &tm);
	char when[64], cwd[4096];
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
	unsigned char id[8] = {0};
	if (getrandom(id, sizeof id, 0) != sizeof id)
		memset(id, 0, sizeof id);
	fprintf(f, "{\"time\":\"%s.%03ldZ\",\"run_id\":\"", when, now.tv_nsec / 1000000);
	for (size_t i = 0; i < sizeof id; i++)
		fprintf(f, "%02x", id[i]);
	fputs("\",\"session\":", f);
	json_str(f, p->session);
	fputs(",\"argv\":[", f);
	for (char **a = o->argv; a && *a; a++) {
		if (a != o->argv)
			fputc(',', f);
		json_str(f, *a);
	}
	fputs("],\"cwd\":", f);
	json_str(f, getcwd(cwd, sizeof cwd) ? cwd : "");
	fprintf(f, ",\"caller_uid\":%u,\"jail_version\":", (unsigned)getuid());
	json_str(f, p->version);
	fputc(',', f);
	fputs(rec + 1, f); /* the status record's fields, after its "{" */
	if (fclose(f) != 0) {
		free(mem);
		return NULL;
	}
	return mem;
}

/* kernel_fs reports whether fd is a file of a kernel pseudo-filesystem
 * (procfs, sysfs, cgroupfs, ...): "regular" files there are interfaces
 * (/proc/self/mem), never a place for a record. */
static int kernel_fs(int fd)
{
	static const long magic[] = {0x9fa0 /* proc */,      0x62656572 /* sysfs */,    0x27e0eb /* cgroup */,
				     0x63677270 /* cgroup2 */, 0x64626720 /* debugfs */,  0x74726163 /* tracefs */,
				     0x73636673 /* securityfs */, 0x62656570 /* configfs */, 0xcafe4a11 /* bpf */,
				     0xde5e81e4 /* efivarfs */,  0x6165676c /* pstore */,  0x42494e4d /* binfmt_misc */,
				     0x19800202 /* mqueue */,    0xf97cff8c /* selinuxfs */, 0x65735543 /* fusectl */,
				     0x6e736673 /* nsfs */};
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0)
		return 1;
	for (size_t i = 0; i < sizeof magic / sizeof magic[0]; i++)
		if ((long)sf.f_type == magic[i])
			return 1;
	return 0;
}

/* record_target checks fd, opened for a record (the status record, the
 * audit log): a regular file outside the kernel's pseudo-filesystems, or,
 * for fd:N, anything but such a file. 0, or -1 with errno EINVAL. */
static int record_target(int fd, int any_type)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -1;
	if ((S_ISREG(st.st_mode) || !any_type) && (!S_ISREG(st.st_mode) || kernel_fs(fd))) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* open_status_path opens the record's path: through no link but root's,
 * and a regular file (one planted in a workspace must
 * neither redirect the record nor stall jail; /proc/self/mem would swallow
 * it), emptied; -1 (errno) when it cannot be. */
static int open_status_path(const char *to)
{
	int fd = hostfile_open(to, O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY, 0644);
	if (fd >= 0 && (record_target(fd, 0) < 0 || ftruncate(fd, 0) < 0)) {
		close(fd);
		fd = -1;
		errno = EINVAL;
	}
	return fd;
}

/* open_status opens where the record goes: fd:N (a copy above 2, so the
 * command's stdio stay as they are), or a path, checked now and opened
 * again for the record once the jail is gone (reopen_status). It returns
 * -1 for none, -2 on error. */
static int open_status(const char *to, struct jerr *e)
{
	if (!to || !*to)
		return -1;
	if (strncmp(to, "fd:", 3) == 0) {
		char *end;
		long n = strtol(to + 3, &end, 10);
		int fd = (*end || end == to + 3 || n < 0 || n > 1 << 20) ? -1 : fcntl((int)n, F_DUPFD_CLOEXEC, 3);
		if (fd < 0) {
			jerr_set(e, EBADF, "--status-json %s", to);
			return -2;
		}
		if (record_target(fd, 1) < 0) {
			jerr_set(e, errno, "--status-json %s: a file of the kernel's, not one a record can go to", to);
			close(fd);
			return -2;
		}
		return fd;
	}
	int fd = open_status_path(to);
	if (fd < 0) {
		jerr_set(e, errno, "--status-json %s: open a regular file%s", to,
			 errno == ELOOP ? " (through no symbolic link but root's)" : "");
		return -2;
	}
	return fd;
}

/* reopen_status opens the record's path again, now that nothing of the jail
 * runs: a jail that could write where the record goes may have moved the
 * file opened at the start and put its own in its place, or a link; the
 * record goes to the path as it is now, or, when that is no file jail will
 * write, nowhere (-1, errno). fd:N stays the caller's fd. */
static int reopen_status(const char *to, int fd)
{
	if (strncmp(to, "fd:", 3) == 0)
		return fd;
	close(fd);
	return open_status_path(to);
}

/* finish reports the run and ends jail with the command's status, or its
 * own: 125 when the jail could not be built, 126/127 when the command could
 * not be exec'd, 128+N when it died of signal N. */
static void finish(const struct run_plan *p, int status_fd, const struct outcome *o, const char *jail_err)
	__attribute__((noreturn));

/* kill_jail ends the whole jail: PID 1 dies, and the kernel kills its pid
 * namespace with it, daemons and grandchildren too. Before PID 1 is
 * known, the init stage's process group holds it. */
static void kill_jail(pid_t pid1, pid_t stage, int stage_gone)
{
	if (pid1)
		kill(pid1, SIGKILL);
	else if (!stage_gone)
		kill(-stage, SIGKILL);
}

/* fmt_bytes writes n as profiles do: "512M". */
static void fmt_bytes(uint64_t n, char *out, size_t size)
{
	static const char units[] = "TGMK";
	for (int i = 0; i < 4; i++) {
		uint64_t m = 1ull << (10 * (4 - i));
		if (n >= m && n % m == 0) {
			snprintf(out, size, "%llu%c", (unsigned long long)(n / m), units[i]);
			return;
		}
	}
	snprintf(out, size, "%llu bytes", (unsigned long long)n);
}

/* limit_line is the one line jail prints when a limit killed the command
 * or hurt the run, so that whoever reads the output sees why; "" none. */
static const char *limit_line(const struct run_plan *p, const struct outcome *o, int sig, char *buf, size_t size)
{
	char v[64];
	const struct cg_usage *u = &o->cg;
	if (o->timed_out) {
		/* In the largest unit that divides it, as it was likely
		 * written: "10m", "90s", "1500ms". */
		static const struct {
			uint64_t ns;
			const char *unit;
		} units[] = {{3600000000000ull, "h"}, {60000000000ull, "m"}, {1000000000ull, "s"},
			     {1000000ull, "ms"},      {1000ull, "us"},        {1ull, "ns"}};
		uint64_t t = p->time_limit_ns;
		size_t i = 0;
		while (t % units[i].ns)
			i++;
		snprintf(v, sizeof v, "%llu%s", (unsigned long long)(t / units[i].ns), units[i].unit);
		snprintf(buf, size, "killed: time limit %s exceeded", v);
	} else if (o->pids_killed) {
		snprintf(buf, size, "killed: process limit %u reached (a fork bomb?)", p->cg.pids);
	} else if (o->have_cg && u->oom_kills > 0) {
		fmt_bytes(p->cg.memory, v, sizeof v);
		if (sig == SIGKILL)
			snprintf(buf, size, "killed: memory limit %s exceeded", v);
		else
			snprintf(buf, size, "memory limit %s exceeded: the OOM killer ended %lld process%s", v,
				 (long long)u->oom_kills, u->oom_kills == 1 ? "" : "es");
	} else if (sig == SIGXCPU) {
		snprintf(buf, size, "killed: CPU time limit exceeded (RLIMIT_CPU)");
	} else if (sig == SIGXFSZ) {
		snprintf(buf, size, "killed: file size limit exceeded (RLIMIT_FSIZE)");
	} else if (o->have_cg && u->pids_max > 0) {
		snprintf(buf, size, "process limit %u reached: %lld fork%s refused (EAGAIN), and the run went on", p->cg.pids,
			 (long long)u->pids_max, u->pids_max == 1 ? "" : "s");
	} else {
		buf[0] = 0;
	}
	return buf;
}

/* nonblocking_out is fd, or, for a pipe or terminal, a private
 * non-blocking open of the same file, so that writing to the caller's end
 * never blocks jail (a terminal the command stopped with TCOOFF would);
 * *sock says fd is a socket, to send with MSG_DONTWAIT. A regular file does
 * not block, and keeps the caller's own description and offset. */
static int nonblocking_out(int fd, int *sock)
{
	struct stat st;
	*sock = 0;
	int ptn;
	if (fstat(fd, &st) < 0 || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		return fd;
	/* Not for a pty master, /dev/tty, the console or ptmx: opening those
	 * again is another terminal (ptmx makes a new pty); bounded writes
	 * to the fd itself it is. */
	if (S_ISCHR(st.st_mode) && (major(st.st_rdev) == 5 || ioctl(fd, TIOCGPTN, &ptn) == 0))
		return fd;
	if (S_ISSOCK(st.st_mode)) {
		*sock = 1;
		return fd;
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int own = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat ost;
	if (own >= 0 && fstat(own, &ost) == 0 && ost.st_dev == st.st_dev && ost.st_ino == st.st_ino)
		return own;
	if (own >= 0)
		close(own);
	return fd;
}

/* say writes jail's one line to stderr, waiting up to about two seconds
 * for the caller's end to take it, never blocked for good. */
static void say(const char *line)
{
	char buf[1200];
	int sock, n = snprintf(buf, sizeof buf, "jail: %s\n", line);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof buf)
		n = (int)sizeof buf - 1, buf[n - 1] = '\n';
	int fd = nonblocking_out(2, &sock);
	write_out(fd, sock, buf, (size_t)n); /* none to tell if it fails */
	if (fd != 2)
		close(fd);
}

static void finish(const struct run_plan *p, int status_fd, const struct outcome *o, const char *jail_err)
{
	int code, sig = 0;
	const char *err = NULL, *line = NULL;
	if (!jail_err)
		jail_err = o->fatal;
	if (jail_err) {
		code = 125;
		err = line = jail_err;
	} else if (o->err[0] == JERR_SETUP || (!o->have_status && !o->timed_out && !o->pids_killed)) {
		code = 125;
		err = line = o->err[0] ? o->err + 1 : "the jail's init stage died without a status (killed from outside?)";
	} else if (!o->have_status || o->pids_killed) {
		/* Killed by jail; or, under on_pids_limit = "kill", a fork was
		 * refused and the command ended before jail saw it (v1 is read
		 * every 10 ms): the run ends as killed by the limit all the
		 * same, as it would have been a moment later. */
		sig = SIGKILL;
		code = 128 + sig;
	} else if (o->exited) {
		code = o->code;
	} else {
		sig = o->code;
		code = 128 + sig;
	}
	if (!jail_err && (o->err[0] == JERR_NOTFOUND || o->err[0] == JERR_NOEXEC)) {
		code = o->err[0] == JERR_NOTFOUND ? 127 : 126;
		err = line = o->err + 1;
	}
	char why[256];
	if (!line && (line = limit_line(p, o, sig, why, sizeof why)) && !*line)
		line = NULL;
	if (o->cgr)
		cg_remove(o->cgr);
	char *rec = status_record(p, o, code, sig, err);
	if (o->audit_fd > 0) {
		/* One write on an O_APPEND file: concurrent jails' lines never
		 * interleave. A record that cannot be written fails the run
		 * (125), loudly, rather than go missing. */
		char *al = audit_line(p, o, rec);
		size_t n = al ? strlen(al) : 0;
		ssize_t w = al ? write(o->audit_fd, al, n) : -1;
		if (w != (ssize_t)n) {
			/* A partial line ends here, so the next record starts
			 * one of its own. */
			if (w > 0 && write(o->audit_fd, "\n", 1) < 0)
				w = -1;
			char msg[256];
			snprintf(msg, sizeof msg, "audit log: the run's record could not be written (%s)",
				 w < 0 ? strerror(errno) : "short write");
			say(msg);
			code = 125;
		}
		free(al);
	}
	if (status_fd >= 0 && ((status_fd = reopen_status(o->status_to, status_fd)) < 0 || write_status(status_fd, rec) < 0)) {
		/* As for the audit log: a record asked for and lost fails the
		 * run, loudly. */
		char msg[256];
		snprintf(msg, sizeof msg, "--status-json %s: the run's record could not be written (%s)", o->status_to,
			 errno == ETIMEDOUT ? "the reader did not take it within 2 s"
			 : errno == ELOOP   ? "a symbolic link stands where it goes, put there during the run"
					    : strerror(errno));
		say(msg);
		code = 125;
	}
	free(rec);
	/* Why the allowlist proxy failed, when it did: the jail had no
	 * network from then on. Its words start "jail: " already. */
	if (o->proxy && o->proxy->note[0])
		say(o->proxy->note + (strncmp(o->proxy->note, "jail: ", 6) ? 0 : 6));
	else if (o->proxy && o->proxy->failed)
		say("the allowlist proxy ended before the jail: it had no network from then on");
	if (line)
		say(line);
	_exit(code);
}

/* write_maps gives the init stage's user namespace its one uid and gid: the
 * command's inside, the caller's (or, for root, the unprivileged host ids)
 * outside. Only this process may: an unprivileged one maps just itself. */
static int write_maps(pid_t pid, const struct run_plan *p, struct jerr *e)
{
	char path[64], map[64];
	unsigned host_uid = p->flags & RUN_ROOT ? p->host_uid : (unsigned)geteuid();
	unsigned host_gid = p->flags & RUN_ROOT ? p->host_gid : (unsigned)getegid();
	if (!(p->flags & RUN_ROOT)) {
		/* An unprivileged gid map needs setgroups denied for good. */
		snprintf(path, sizeof path, "/proc/%d/setgroups", pid);
		if (file_put(path, "deny") < 0)
			return jerr_set(e, errno, "write the jail's setgroups");
	}
	snprintf(path, sizeof path, "/proc/%d/uid_map", pid);
	snprintf(map, sizeof map, "%u %u 1\n", p->uid, host_uid);
	if (file_put(path, map) < 0)
		return jerr_set(e, errno, "write the jail's uid_map");
	snprintf(path, sizeof path, "/proc/%d/gid_map", pid);
	snprintf(map, sizeof map, "%u %u 1\n", p->gid, host_gid);
	if (file_put(path, map) < 0)
		return jerr_set(e, errno, "write the jail's gid_map");
	return 0;
}

/* make_trees clones, for a root caller, the bind sources the jail's
 * unprivileged uid may not reach, with their attributes set: read-only,
 * or idmapped from their owner. */
static int make_trees(const struct run_plan *p, int *fds, struct jerr *e)
{
	for (uint32_t i = 0; i < p->ntrees; i++) {
		const struct run_tree *t = &p->trees[i];
		int userns = -1;
		if (t->flags & TREE_IDMAP) {
			userns = idmap_userns(t->owner_uid, t->owner_gid, p->host_uid, p->host_gid, e);
			if (userns < 0)
				return -1;
		}
		fds[i] = mount_clone_tree(t->path, t->flags & TREE_RO, userns, e);
		if (userns >= 0)
			close(userns);
		if (fds[i] < 0)
			return -1;
	}
	return 0;
}

/* spawn starts the init stage with the fds stage.h lays out and, when the
 * output is relayed, the pipes out as its stdout and stderr. On cgroup v2
 * it starts in the run's cgroup (CLONE_INTO_CGROUP): no attach, and no
 * moment outside it. */
static pid_t spawn(const int *fds, int nfds, const int *out, int cgroup_fd)
{
	/* Above every target number first, so no dup2 below clobbers one. */
	int high[FD_NFIXED + 4096 + 2];
	for (int i = 0; i < nfds + (out ? 2 : 0); i++)
		if ((high[i] = fcntl(i < nfds ? fds[i] : out[i - nfds], F_DUPFD_CLOEXEC, 3 + nfds)) < 0)
			return -1;
	static char *const argv[] = {"jail", NULL};
	static char *const envp[] = {JAIL_STAGE_ENV "init", NULL};
	pid_t pid;
	if (cgroup_fd >= 0) {
		/* A fork, not a vfork (no CLONE_VM without a stack of its
		 * own), that the runner waits on until it execs. */
		struct clone_args args = {.flags = CLONE_VFORK | CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
					  .cgroup = (uint64_t)cgroup_fd};
		pid = (pid_t)syscall(SYS_clone3, &args, sizeof args);
	} else {
		pid = vfork();
	}
	if (pid == 0) {
		for (int i = 0; i < nfds; i++)
			if (dup2(high[i], 3 + i) < 0)
				_exit(125);
		if (out && (dup2(high[nfds], 1) < 0 || dup2(high[nfds + 1], 2) < 0))
			_exit(125);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGTTOU, SIG_DFL);
		setsid();
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		execve("/proc/self/exe", argv, envp);
		_exit(125);
	}
	for (int i = 0; i < nfds + (out ? 2 : 0); i++)
		close(high[i]);
	return pid;
}

static void reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* Fds of the runner's own ends. */
enum { P_PLAN, P_ERRS, P_STATUS, P_SYNC, P_SIG, P_TIMER, P_NOTIFY, P_LISTENER, P_PIDS, P_OUT1, P_OUT2,
       P_GONE1, P_GONE2, P_NET, P_HTTP, P_SOCKS, P_PROXY, P_FROZEN, P_N };

static int recv_listeners(int sock, struct proxy *px)
{
	int fds[2];
	if (fd_recv(sock, fds, 2) < 0)
		return -1;
	px->http = fds[0], px->socks = fds[1];
	return 0;
}

/* relay passes one of the command's output streams on to jail's own, up
 * to the cap; past it, it reads and drops (so the command never blocks on
 * a full pipe), counts, and at the end adds one line saying how much went.
 * It never blocks jail itself, so the time limit, signals and the seccomp
 * answers go on whatever the caller's end does: a pipe or terminal gets a
 * private non-blocking open of its own (a stopped terminal, TCOOFF or
 * ^S, would block a plain write), a socket gets MSG_DONTWAIT; a regular
 * file, which does not block, keeps the caller's own description and
 * offset. */
struct relay {
	int in, out;            /* the pipe from the jail (-1: at its end); where to write */
	int sock;               /* out is a socket: send with MSG_DONTWAIT */
	const char *name;       /* stdout, stderr */
	uint64_t cap, passed, dropped, lost;
	int broken;             /* the caller's end is gone (closed): the command's end is closed too */
	int last_nl;            /* the last byte passed on was a newline */
	size_t off, len;
	char buf[65536];
};

/* relay_open readies the caller's fd for non-blocking writes. */
static void relay_open(struct relay *r, int fd) { r->out = nonblocking_out(fd, &r->sock); }

static int relay_done(const struct relay *r) { return r->in < 0 && r->off == r->len; }

/* relay_poll is what to wait for: the caller's end while something waits
 * to go out, else the pipe. */
static struct pollfd relay_poll(const struct relay *r)
{
	if (r->off < r->len)
		return (struct pollfd){.fd = r->out, .events = POLLOUT};
	return (struct pollfd){.fd = r->in, .events = POLLIN};
}

/* relay_give_up drops what still waits for a caller that does not read:
 * the jail is over, and jail must end too. */
static void relay_give_up(struct relay *r)
{
	r->lost += r->len - r->off;
	r->off = r->len = 0;
	if (r->in >= 0)
		close(r->in);
	r->in = -1;
}

/* relay_watch is the caller's end, watched for its reader going away
 * (POLLERR on a pipe, POLLHUP on a socket or a hung-up terminal) while
 * nothing is written to it: past the cap, output is only dropped. */
static struct pollfd relay_watch(const struct relay *r)
{
	return (struct pollfd){.fd = r->broken || r->in < 0 ? -1 : r->out, .events = 0};
}

/* relay_broken ends a relay whose caller closed its end: the command's
 * end is closed too, so its next write fails (SIGPIPE or EPIPE) as it
 * would without jail, and `yes | head -1` ends as it does outside. */
static void relay_broken(struct relay *r)
{
	r->broken = 1;
	relay_give_up(r);
}

static void relay_step(struct relay *r)
{
	if (r->off < r->len) {
		size_t n = r->len - r->off;
		ssize_t w = bounded_write(r->out, r->sock, r->buf + r->off, n);
		if (w > 0) {
			r->off += (size_t)w;
		} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
			/* EPIPE: the caller closed its end; EIO: a terminal
			 * hung up. */
			relay_broken(r);
		}
		if (r->off == r->len)
			r->off = r->len = 0;
		return;
	}
	ssize_t n = read(r->in, r->buf, sizeof r->buf);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(r->in);
		r->in = -1;
		if (r->dropped && !r->broken) {
			char cap[64];
			fmt_bytes(r->cap, cap, sizeof cap);
			int m = snprintf(r->buf, sizeof r->buf, "%sjail: output truncated: %llu bytes of %s dropped (cap %s)\n",
					 r->last_nl || !r->passed ? "" : "\n", (unsigned long long)r->dropped, r->name, cap);
			r->len = m > 0 ? (size_t)m : 0;
		}
		return;
	}
	uint64_t keep = r->passed >= r->cap ? 0 : r->cap - r->passed;
	if (keep > (uint64_t)n)
		keep = (uint64_t)n;
	r->dropped += (uint64_t)n - keep;
	r->passed += keep;
	if (keep) {
		r->len = (size_t)keep;
		r->last_nl = r->buf[keep - 1] == '\n';
	}
}

/* stop_self is ^Z (SIGTSTP to jail): the SIGTSTP goes on to the command's
 * process group first (on the plan pipe, now, when the plan is sent), and
 * after a moment for its handlers (a full-screen program restores the
 * terminal), the jail is frozen (cgroup v2) and jail stops, as a job does:
 * its caller (a shell) takes the terminal back. The SIGTSTP is delivered
 * to jail itself, so the kernel decides as for any job (no stop in an
 * orphaned process group, where nothing would continue it); once jail runs
 * again the jail is thawed. PID 1, seeing jail stopped, stops the jail too
 * (with SIGSTOP where there is no freezer); the time limit is wall time,
 * stopped time included. */
static void stop_self(const struct cg_run *cg, int plan, unsigned char *sigq, size_t *nsigq, int plan_sent)
{
	if (plan_sent && *nsigq && write(plan, sigq, *nsigq) == (ssize_t)*nsigq)
		*nsigq = 0;
	struct timespec moment = {0, 20000000};
	nanosleep(&moment, NULL);
	/* Continued meanwhile: no stop (the stop would discard the pending
	 * SIGCONT, and nothing would continue jail). */
	sigset_t pending;
	if (sigpending(&pending) == 0 && sigismember(&pending, SIGCONT))
		return;
	ssize_t w = cg->freeze >= 0 ? write(cg->freeze, "1", 1) : 0;
	(void)w;
	sigset_t tstp;
	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	raise(SIGTSTP);
	sigprocmask(SIG_UNBLOCK, &tstp, NULL);
	sigprocmask(SIG_BLOCK, &tstp, NULL);
	cg_thaw(cg);
}

void runner_main(const struct run_plan *p, char **argv, const char *status_to, uint64_t started)
{
	extern char **environ;
	struct jerr e = {0};
	struct outcome o = {0};
	/* Fds 0-2 open, so nothing of jail's own (the status record, a
	 * relay pipe) takes one of their numbers and gets the command's
	 * output. */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int null = open("/dev/null", O_RDWR);
			if (null >= 0 && null != fd) {
				dup2(null, fd);
				close(null);
			}
		}
	int status_fd = open_status(status_to, &e);
	if (status_fd == -2) {
		/* Nowhere to write the record: say so and stop. */
		dprintf(2, "jail: %s\n", e.msg);
		_exit(125);
	}
	o.argv = argv;
	o.status_to = status_to;
	/* A replayed plan is keyed on jail's own arguments: the command is
	 * checked here, as the Go side checks it. */
	if (!argv[0] || !argv[0][0])
		finish(p, status_fd, &o, "empty command: the program to run after -- is \"\"");
	if (p->audit_path[0]) {
		/* Before anything runs: a log that cannot be written stops the
		 * run. Never through a symlink, only a regular file. */
		int fd = open(p->audit_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
		struct stat st;
		if (fd >= 0 && (record_target(fd, 0) < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid())) {
			close(fd);
			fd = -1;
			errno = EINVAL;
		}
		if (fd < 0) {
			dprintf(2, "jail: audit log %s: %s (a regular file jail can append to)\n", p->audit_path, strerror(errno));
			_exit(125);
		}
		if (fd == 0) { /* never 0: fds 0-2 are open by now */
			close(fd);
			_exit(125);
		}
		o.audit_fd = fd;
	}
	/* The signals jail passes on to the command: PID 1's list, but for
	 * SIGCHLD (pid1.c); and SIGPIPE ignored, so a dead init stage is an
	 * EPIPE rather than jail's death. */
	sigset_t fwd;
	pid1_signals(&fwd);
	sigdelset(&fwd, SIGCHLD);
	sigprocmask(SIG_BLOCK, &fwd, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* A command that sets TOSTOP on the caller's terminal must not stop
	 * jail when it writes there from the background. */
	signal(SIGTTOU, SIG_IGN);
	struct sigaction alarm = {.sa_handler = on_alarm};
	sigaction(SIGALRM, &alarm, NULL);

	int child_fds[FD_NFIXED + 4096], own[P_N];
	int pl[2], er[2], st[2], sy[2], nt[2], ne[2];
	if (pipe2(pl, O_CLOEXEC) || pipe2(er, O_CLOEXEC) || pipe2(st, O_CLOEXEC) || pipe2(sy, O_CLOEXEC) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, nt) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ne)) {
		jerr_set(&e, errno, "pipe");
		finish(p, status_fd, &o, e.msg);
	}
	child_fds[0] = pl[0], child_fds[1] = er[1], child_fds[2] = st[1], child_fds[3] = sy[1], child_fds[4] = nt[1];
	child_fds[5] = ne[1];
	/* The runner's own stat, for PID 1 to see it stopped (SIGSTOP cannot
	 * be caught: jail cannot tell the jail itself). */
	if ((child_fds[6] = open("/proc/self/stat", O_RDONLY | O_CLOEXEC)) < 0) {
		jerr_set(&e, errno, "open /proc/self/stat");
		finish(p, status_fd, &o, e.msg);
	}
	int allowlist = strcmp(p->net_mode, "allowlist") == 0;
	static struct proxy px = {.http = -1, .socks = -1, .lifeline = -1};
	o.proxy = &px;
	if (p->sc_flags & SC_NOTIFY) {
		struct wire answers = p->sc_answers;
		if (!(o.denied = sc_report_new(&answers, p->sc_flags, &e)))
			finish(p, status_fd, &o, e.msg);
	}
	if ((p->flags & RUN_ROOT) && make_trees(p, child_fds + FD_NFIXED, &e) < 0)
		finish(p, status_fd, &o, e.msg);
	struct buf plan = init_plan(p, argv, environ);
	if (plan.bad) {
		jerr_set(&e, ENOMEM, "plan");
		finish(p, status_fd, &o, e.msg);
	}
	/* The output relay's pipes, when there is a cap. */
	static struct relay relays[2];
	int outw[2] = {-1, -1};
	for (int i = 0; p->max_output && i < 2; i++) {
		int pp[2];
		if (pipe2(pp, O_CLOEXEC) < 0) {
			jerr_set(&e, errno, "pipe for the output relay");
			finish(p, status_fd, &o, e.msg);
		}
		relays[i] = (struct relay){.in = pp[0], .name = i ? "stderr" : "stdout", .cap = p->max_output};
		relay_open(&relays[i], 1 + i);
		outw[i] = pp[1];
	}
	/* The run's cgroup, limited. On v2 before anything of the jail
	 * exists: the init stage starts inside it. On v1 while the init stage
	 * execs and makes its user namespace, which takes longer: it is moved
	 * in before it starts anything (below). */
	struct cg_run cg = {.dir_fd = -1, .pids_events = -1, .freeze = -1, .events = -1};
	int v2 = (p->cg.flags & CG_ON) && (p->cg.flags & CG_V2);
	if (v2 && cg_create(&p->cg, &cg, &e) < 0)
		finish(p, status_fd, &o, e.msg);
	o.cgr = &cg;
	/* What PID 1 freezes the jail with while jail is stopped (v2); on v1
	 * it has only signals, and gets /dev/null. */
	child_fds[7] = cg.freeze >= 0 ? fcntl(cg.freeze, F_DUPFD_CLOEXEC, 3) : open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (child_fds[7] < 0) {
		jerr_set(&e, errno, "the freezer for PID 1");
		finish(p, status_fd, &o, e.msg);
	}
	pid_t stage = spawn(child_fds, FD_NFIXED + (int)p->ntrees, p->max_output ? outw : NULL, cg.dir_fd);
	if (stage < 0) {
		jerr_set(&e, errno, "start the init stage");
		finish(p, status_fd, &o, e.msg);
	}
	if ((p->cg.flags & CG_ON) && !v2 && cg_create(&p->cg, &cg, &e) < 0) {
		kill(stage, SIGKILL);
		reap(stage);
		finish(p, status_fd, &o, e.msg);
	}
	for (int i = 0; i < FD_NFIXED + (int)p->ntrees; i++)
		close(child_fds[i]);
	for (int i = 0; i < 2; i++)
		if (outw[i] >= 0)
			close(outw[i]);

	/* The user namespace exists once the init stage says 'U'. */
	char u = 0;
	ssize_t n;
	while ((n = read(sy[0], &u, 1)) < 0 && errno == EINTR)
		;
	if (n != 1 || u != 'U' || write_maps(stage, p, &e) < 0) {
		if (n != 1 || u != 'U') {
			close(pl[1]);
			n = read(er[0], o.err, sizeof o.err - 1);
			o.err[n > 0 ? n : 0] = 0;
			o.err[strcspn(o.err, "\n")] = 0;
			if (!o.err[0])
				jerr_set(&e, 0, "the init stage died before it could create the user namespace");
		}
		kill(stage, SIGKILL);
		reap(stage);
		finish(p, status_fd, &o, e.msg[0] ? e.msg : o.err[0] == JERR_SETUP ? o.err + 1 : NULL);
	}

	/* On v1 the jail joins its cgroup now: the init stage, before it
	 * starts PID 1, so everything of the jail is born inside. Joining
	 * waits for an RCU grace period; the plan goes out first, so the
	 * init stage builds its namespaces meanwhile, and waits for the
	 * plan's last byte only before it starts PID 1. */
	fcntl(pl[1], F_SETFL, O_NONBLOCK);
	size_t sendable = plan.len - 1, sent = 0;
	n = write(pl[1], plan.p, sendable);
	if (n > 0)
		sent = (size_t)n;
	if (cg.n && cg_attach(&cg, stage, &e) < 0) {
		kill(stage, SIGKILL);
		reap(stage);
		finish(p, status_fd, &o, e.msg);
	}
	sendable = plan.len;

	own[P_PLAN] = pl[1], own[P_ERRS] = er[0], own[P_STATUS] = st[0], own[P_SYNC] = sy[0];
	/* The process limit being hit: v2 notifies changes of pids.events
	 * (POLLPRI); v1 does not (neither poll nor inotify wakes), so there
	 * it is read every 10 ms (a pread, ~2 us). */
	own[P_PIDS] = (p->cg.flags & CG_PIDS_KILL) ? cg.pids_events : -1;
	short pids_events = POLLPRI;
	if (own[P_PIDS] >= 0 && !cg.v2) {
		struct itimerspec every = {.it_interval = {0, 10000000}, .it_value = {0, 10000000}};
		own[P_PIDS] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (own[P_PIDS] < 0 || timerfd_settime(own[P_PIDS], 0, &every, NULL) < 0) {
			jerr_set(&e, errno, "timerfd for the process limit");
			kill(stage, SIGKILL);
			reap(stage);
			finish(p, status_fd, &o, e.msg);
		}
		pids_events = POLLIN;
	}
	own[P_NOTIFY] = (p->sc_flags & SC_NOTIFY) ? nt[0] : -1;
	own[P_LISTENER] = -1;
	if (own[P_NOTIFY] < 0)
		close(nt[0]);
	own[P_NET] = allowlist ? ne[0] : -1;
	if (!allowlist)
		close(ne[0]);
	own[P_HTTP] = own[P_SOCKS] = own[P_PROXY] = -1;
	/* v2: the jail frozen while jail runs (PID 1 froze it just as jail
	 * was continued) is thawed; see cg_thaw. */
	own[P_FROZEN] = cg.events;
	own[P_SIG] = signalfd(-1, &fwd, SFD_CLOEXEC);
	own[P_TIMER] = -1;
	int timer_ok = 1;
	if (p->time_limit_ns) {
		own[P_TIMER] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		uint64_t at = started + p->time_limit_ns;
		struct itimerspec its = {.it_value = {.tv_sec = (time_t)(at / 1000000000u), .tv_nsec = (long)(at % 1000000000u)}};
		timer_ok = own[P_TIMER] >= 0 && timerfd_settime(own[P_TIMER], TFD_TIMER_ABSTIME, &its, NULL) == 0;
	}
	if (own[P_SIG] < 0 || !timer_ok) {
		/* Without them, signals would not reach the command or the
		 * time limit would not hold: no jail rather than less of one. */
		jerr_set(&e, errno, own[P_SIG] < 0 ? "signalfd for forwarding signals" : "timerfd for the time limit");
		kill(stage, SIGKILL);
		reap(stage);
		finish(p, status_fd, &o, e.msg);
	}
	size_t errlen = 0;
	uint64_t drain_until = 0;
	pid_t pid1 = 0;
	unsigned char pidbuf[4];
	size_t pidlen = 0;
	/* Signals passed on to PID 1, a byte each, on the plan pipe once
	 * the plan is sent: unlike kill(2), which the kernel merges with one
	 * of the same number already pending (a jail that keeps signalling
	 * its PID 1 would have jail's lost), bytes queue, and nothing of the
	 * jail's can write there. */
	unsigned char sigq[256];
	size_t nsigq = 0;
	int stage_gone = 0;
	for (;;) {
		struct pollfd fds[P_N];
		for (int i = 0; i < P_N; i++)
			fds[i] = (struct pollfd){.fd = own[i], .events = POLLIN};
		fds[P_PLAN].events = POLLOUT;
		if (sent == sendable && !nsigq)
			fds[P_PLAN].fd = -1;
		fds[P_PIDS].events = pids_events;
		fds[P_FROZEN].events = POLLPRI;
		for (int i = 0; i < 2; i++) {
			fds[P_OUT1 + i] = p->max_output ? relay_poll(&relays[i]) : (struct pollfd){.fd = -1};
			fds[P_GONE1 + i] = p->max_output ? relay_watch(&relays[i]) : (struct pollfd){.fd = -1};
		}
		int over = own[P_STATUS] < 0 && own[P_ERRS] < 0 && (pid1 || stage_gone);
		if (over && (!p->max_output || (relay_done(&relays[0]) && relay_done(&relays[1]))))
			break;
		/* The jail is over but the caller does not take its output:
		 * a few seconds, then what is left is dropped and jail ends. */
		int timeout = -1;
		if (over) {
			uint64_t now = monotonic_ns();
			if (!drain_until)
				drain_until = now + 5000000000ull;
			if (now >= drain_until) {
				relay_give_up(&relays[0]);
				relay_give_up(&relays[1]);
				break;
			}
			timeout = (int)((drain_until - now) / 1000000) + 1;
		}
		if (poll(fds, P_N, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (fds[P_PLAN].revents && sent < sendable) {
			n = write(pl[1], plan.p + sent, sendable - sent);
			if (n > 0)
				sent += (size_t)n;
			else if (errno != EAGAIN)
				sent = sendable; /* the init stage is gone; it says why below */
		} else if (fds[P_PLAN].revents) {
			n = write(pl[1], sigq, nsigq);
			if (n > 0 || errno != EAGAIN) {
				size_t done = n > 0 ? (size_t)n : nsigq;
				memmove(sigq, sigq + done, nsigq - done);
				nsigq -= done;
			}
		}
		if (fds[P_SYNC].revents) {
			n = read(sy[0], pidbuf + pidlen, sizeof pidbuf - pidlen);
			if (n > 0 && (pidlen += (size_t)n) == sizeof pidbuf) {
				uint32_t v;
				memcpy(&v, pidbuf, sizeof v);
				pid1 = (pid_t)v;
				if (o.timed_out)
					kill(pid1, SIGKILL);
			}
			if (n <= 0 || pid1) {
				close(sy[0]);
				own[P_SYNC] = -1;
				reap(stage);
				stage_gone = 1;
			}
		}
		if (fds[P_ERRS].revents) {
			n = read(er[0], o.err + errlen, sizeof o.err - 1 - errlen);
			if (n > 0) {
				errlen += (size_t)n;
			} else {
				o.err[errlen] = 0;
				o.err[strcspn(o.err, "\n")] = 0;
				o.setup_ns = monotonic_ns() - started;
				close(er[0]);
				own[P_ERRS] = -1;
			}
		}
		if (fds[P_STATUS].revents) {
			struct status_record rec;
			n = read(st[0], &rec, sizeof rec);
			if (n == sizeof rec && rec.magic == PLAN_MAGIC) {
				o.have_status = 1;
				o.exited = rec.exited;
				o.code = rec.code;
			} else if (n <= 0) {
				close(st[0]);
				own[P_STATUS] = -1;
			}
		}
		if (fds[P_SIG].revents) {
			struct signalfd_siginfo si;
			if (read(own[P_SIG], &si, sizeof si) == sizeof si) {
				int sig = (int)si.ssi_signo;
				if (sig == SIGCONT)
					cg_thaw(&cg);
				/* A stop or continue before the jail has a
				 * command has nothing to stop or continue. */
				int early = !pid1 && (sig == SIGTSTP || sig == SIGCONT);
				if (!early && nsigq < sizeof sigq)
					sigq[nsigq++] = (unsigned char)sig;
				if (sig == SIGTSTP)
					stop_self(&cg, pl[1], sigq, &nsigq, sent == sendable);
			}
		}
		if (own[P_NOTIFY] >= 0 && fds[P_NOTIFY].revents) {
			/* The init stage loaded the filter: its listener. Without
			 * it the refused calls would go unanswered (or, the filter
			 * losing its listener, fail ENOSYS unreported): the jail
			 * ends. An init stage that died before loading sends
			 * nothing, and says why on its error pipe. */
			char byte;
			int eof = recv(nt[0], &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
			own[P_LISTENER] = sc_recv_listener(nt[0]);
			close(nt[0]);
			own[P_NOTIFY] = -1;
			if (own[P_LISTENER] < 0 && !eof) {
				o.fatal = "could not take the seccomp listener from the init stage (file descriptor limit?)";
				kill_jail(pid1, stage, stage_gone);
			}
		}
		if (own[P_LISTENER] >= 0 && fds[P_LISTENER].revents) {
			/* A handed call waits; or, hung up, the jail is gone. */
			if (!(fds[P_LISTENER].revents & POLLIN) || sc_handle(o.denied, own[P_LISTENER]) < 0) {
				close(own[P_LISTENER]);
				own[P_LISTENER] = -1;
			}
		}
		if (own[P_PIDS] >= 0 && fds[P_PIDS].revents) {
			/* The process limit refused a fork: a fork bomb, or a
			 * runaway. Ended like the time limit ends a run, not left
			 * spinning on fork until it. */
			uint64_t ticks;
			if (pids_events == POLLIN && read(own[P_PIDS], &ticks, sizeof ticks) < 0)
				ticks = 0;
			if (cg_pids_hit(&cg)) {
				o.pids_killed = 1;
				kill_jail(pid1, stage, stage_gone);
				own[P_PIDS] = -1;
			}
		}
		for (int i = 0; p->max_output && i < 2; i++) {
			if (fds[P_GONE1 + i].fd >= 0 && (fds[P_GONE1 + i].revents & (POLLERR | POLLHUP)))
				relay_broken(&relays[i]);
			else if (fds[P_OUT1 + i].fd >= 0 && fds[P_OUT1 + i].revents)
				relay_step(&relays[i]);
		}
		if (own[P_NET] >= 0 && fds[P_NET].revents) {
			/* PID 1's proxy listeners; EOF: it made none (it failed,
			 * and says why on the error pipe). */
			if (recv_listeners(own[P_NET], &px) == 0)
				own[P_HTTP] = px.http, own[P_SOCKS] = px.socks;
			close(own[P_NET]);
			own[P_NET] = -1;
		}
		if ((own[P_HTTP] >= 0 && fds[P_HTTP].revents) || (own[P_SOCKS] >= 0 && fds[P_SOCKS].revents)) {
			/* The first connection: now the proxy starts, and takes
			 * it (and the rest) from the listeners. Without it the
			 * allowlist is no network at all: the run goes on. */
			own[P_PROXY] = proxy_start(&px, p->net_config, &cg);
			own[P_HTTP] = own[P_SOCKS] = -1;
			if (own[P_PROXY] < 0)
				o.fatal = "could not start the allowlist proxy (fork)";
			if (o.fatal)
				kill_jail(pid1, stage, stage_gone);
		}
		if (own[P_PROXY] >= 0 && fds[P_PROXY].revents && !proxy_read(&px, own[P_PROXY])) {
			/* The proxy ended before the jail: the jail has no
			 * network from now; the record says so. */
			close(own[P_PROXY]);
			own[P_PROXY] = -1;
			px.failed = 1;
		}
		if (own[P_FROZEN] >= 0 && fds[P_FROZEN].revents)
			cg_thaw(&cg);
		if (own[P_TIMER] >= 0 && fds[P_TIMER].revents) {
			/* PID 1 dies, and the kernel kills the whole pid
			 * namespace with it: daemons and grandchildren too. */
			o.timed_out = 1;
			kill_jail(pid1, stage, stage_gone);
			close(own[P_TIMER]);
			own[P_TIMER] = -1;
		}
	}
	if (!stage_gone)
		reap(stage);
	if (pid1)
		while (wait4(pid1, NULL, 0, &o.ru) < 0 && errno == EINTR)
			;
	proxy_stop(&px, own[P_PROXY]);
	if (px.http >= 0)
		close(px.http), close(px.socks);
	o.wall_ns = monotonic_ns() - started;
	if (!o.setup_ns)
		o.setup_ns = o.wall_ns;
	if (cg.n) {
		cg_measure(&cg, &o.cg);
		o.have_cg = 1;
		/* A refused fork jail had not seen yet (v1: between two reads)
		 * ends the run as the limit's all the same. */
		if ((p->cg.flags & CG_PIDS_KILL) && o.cg.pids_max > 0)
			o.pids_killed = 1;
	}
	for (int i = 0; p->max_output && i < 2; i++) {
		o.out_dropped[i] = relays[i].dropped;
		o.out_lost += relays[i].lost;
		o.out_closed[i] = relays[i].broken;
	}
	finish(p, status_fd, &o, NULL);
}
