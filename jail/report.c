/* How a run is reported, at the runner's single exit point (finish): jail's
 * exit status, its one line on stderr (why the jail failed, or which limit
 * ended the command), the status record (--status-json: one JSON line, the
 * fields of jail/status.go's Status) and the audit log's line, which embeds
 * it; and where the records go, opened so that nothing the jail planted can
 * redirect them. The runner runs it: C, before the Go runtime, as the whole
 * runner is (runner.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "jail/callerfd.h"
#include "jail/diskwatch.h"
#include "jail/hostfile.h"
#include "jail/json.h"
#include "jail/pty.h"
#include "jail/report.h"
#include "jail/shhint.h"
#include "jail/userns.h"
#include "seccomp/sc.h"

/* disk_killed is which disk limit ended the run, 0 none. */
static int disk_killed(const struct outcome *o) { return o->disk ? o->disk->hit : 0; }

static double ms(uint64_t ns) { return (double)(ns / 1000) / 1000.0; }
static double tv_ms(struct timeval tv) { return (double)tv.tv_sec * 1000.0 + (double)tv.tv_usec / 1000.0; }

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

/* The path is opened again for the record (reopen_status). */
int status_open(const char *to, struct jerr *e)
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

int audit_open(const char *path, struct jerr *e)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
	struct stat st;
	if (fd >= 0 && (record_target(fd, 0) < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid())) {
		close(fd);
		fd = -1;
		errno = EINVAL;
	}
	if (fd < 0)
		return jerr_set(e, 0, "audit log %s: %s (a regular file jail can append to)", path, strerror(errno));
	if (fd == 0) { /* never 0: fds 0-2 are open by now */
		close(fd);
		return jerr_set(e, EBADF, "audit log %s: opened as stdin", path);
	}
	return fd;
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
		   "\"file_too_large\":%s,\"output_truncated\":%s,\"disk_limit_hit\":%s,\"disk_reserve_hit\":%s,",
		o->timed_out ? "true" : "false", o->have_cg && u->oom_kills > 0 ? "true" : "false",
		o->pids_killed || (o->have_cg && u->pids_max > 0) ? "true" : "false", sig == SIGXCPU ? "true" : "false",
		sig == SIGXFSZ ? "true" : "false", o->out_dropped[0] || o->out_dropped[1] ? "true" : "false",
		disk_killed(o) == DISK_LIMIT_HIT ? "true" : "false", disk_killed(o) == DISK_RESERVE_HIT ? "true" : "false");
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
	if (o->disk && o->disk->measured)
		fprintf(f, "\"disk_written_bytes\":%llu,", (unsigned long long)o->disk->written);
	if (o->disk && o->disk->account >= 0)
		fprintf(f, "\"session_disk_bytes\":%llu,", (unsigned long long)o->disk->session_used);
	if (p->secrets[0])
		fprintf(f, "%s,", p->secrets);
	userns_record(f, p);
	if (o->keyring_inherited)
		fputs("\"session_keyring_inherited\":true,", f);
	fprintf(f, "\"limits\":%s,\"network\":", p->limits_json[0] ? p->limits_json : "{}");
	json_str(f, p->net_mode[0] ? p->net_mode : "none");
	fputc(',', f);
	/* The network helper's report (every mode but host: the resolver
	 * refuses lookups in none): JSON it made itself, or nothing to say. */
	if (strcmp(p->net_mode, "host") != 0) {
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
	fprintf(f, "{\"time\":\"%s.%03ldZ\",\"kind\":\"run\",\"run_id\":\"", when, now.tv_nsec / 1000000);
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

void fmt_bytes(uint64_t n, char *out, size_t size)
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
	} else if (disk_killed(o)) {
		disk_line(p, o->disk, buf, size);
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

void say(const char *line)
{
	char buf[1200], sh[1200];
	/* A run jail sh made: its user gives flags through the environment. */
	if (getenv(JAIL_SH_ENV)) {
		sh_hints(line, sh, sizeof sh);
		line = sh;
	}
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

/* verdict is jail's exit status for the run, and what it says: *sig the
 * signal that ended the command (0: none), *err the failure the record
 * names, *line the one line on stderr (NULL: a limit's, if any). */
static int verdict(const struct outcome *o, const char *jail_err, int *sig, const char **err, const char **line)
{
	int code;
	*sig = 0;
	*err = *line = NULL;
	if (!jail_err)
		jail_err = o->fatal;
	if (jail_err) {
		code = 125;
		*err = *line = jail_err;
	} else if (o->err[0] == JERR_SETUP || (!o->have_status && !o->timed_out && !o->pids_killed && !disk_killed(o))) {
		code = 125;
		*err = *line = o->err[0] ? o->err + 1 : "the jail's init stage died without a status (killed from outside?)";
	} else if (!o->have_status || o->pids_killed || disk_killed(o)) {
		/* Killed by jail; or, under on_pids_limit = "kill", a fork was
		 * refused and the command ended before jail saw it (v1 is read
		 * every 10 ms): the run ends as killed by the limit all the
		 * same, as it would have been a moment later. */
		*sig = SIGKILL;
		code = 128 + *sig;
	} else if (o->exited) {
		code = o->code;
	} else {
		*sig = o->code;
		code = 128 + *sig;
	}
	if (!jail_err && (o->err[0] == JERR_NOTFOUND || o->err[0] == JERR_NOEXEC)) {
		code = o->err[0] == JERR_NOTFOUND ? 127 : 126;
		*err = *line = o->err + 1;
	}
	return code;
}

void finish(const struct run_plan *p, const struct outcome *o, const char *jail_err)
{
	tty_restore(); /* tty mode: the caller's terminal as it was, before jail's last line */
	int sig, status_fd = o->status_fd;
	const char *err, *line;
	int code = verdict(o, jail_err, &sig, &err, &line);
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
	/* What the network refused (a lookup, a connection), as the agent's
	 * model reads it: the record is not shown to it. */
	if (o->proxy) {
		for (unsigned i = 0; i < o->proxy->nrefused && i < PROXY_REFUSED_SAID; i++)
			say(o->proxy->refused[i]);
		if (o->proxy->nrefused > PROXY_REFUSED_SAID) {
			char more[160];
			snprintf(more, sizeof more, "network: and %u more refused (the status record's network_denied lists them)",
				 o->proxy->nrefused - PROXY_REFUSED_SAID);
			say(more);
		}
	}
	/* Why the network helper failed, when it did: the jail had no
	 * network from then on. Its words start "jail: " already. */
	if (o->proxy && o->proxy->note[0])
		say(o->proxy->note + (strncmp(o->proxy->note, "jail: ", 6) ? 0 : 6));
	else if (o->proxy && o->proxy->failed)
		say("the jail's network helper ended before the jail: it had no network from then on");
	if (line)
		say(line);
	_exit(code);
}

