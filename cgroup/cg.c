/* One run's cgroup, for the runner: made and limited before the jail
 * starts, joined by the jail before it runs any code of the command's,
 * watched for the process limit, measured, and removed when the run ends.
 * The runner (and the proxy's child, joining) runs it: C, before the Go
 * runtime, so a run replayed from the plan cache never starts Go. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cg.h"
#include "internal/linux/file.h"

void cg_plan_decode(struct wire *w, struct cg_plan *p)
{
	memset(p, 0, sizeof *p);
	p->flags = wire_u32(w);
	p->memory = wire_u64(w);
	p->pids = wire_u32(w);
	p->cpu_quota_us = wire_u32(w);
	p->cpu_period_us = wire_u32(w);
	p->ndirs = wire_u32(w);
	if (p->ndirs > CG_MAX_DIRS) {
		w->bad = 1;
		return;
	}
	for (uint32_t i = 0; i < p->ndirs; i++) {
		p->dirs[i].path = wire_str(w);
		p->dirs[i].ctrl = wire_u32(w);
	}
	if ((p->flags & CG_ON) && !p->ndirs)
		w->bad = 1;
}

/* put writes s into dir/file, as one write (cgroup files take one value
 * per write). */
static int put(const char *dir, const char *file, const char *s)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	return file_put(path, s);
}

/* get reads dir/file into buf (NUL-terminated); -1 when it cannot. */
static ssize_t get(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	return file_get(path, buf, size);
}

/* keyed finds "key N" in a flat-keyed file's text (memory.events, ...). */
static int64_t keyed(const char *text, const char *key)
{
	size_t n = strlen(key);
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, key, n) == 0 && l[n] == ' ')
			return strtoll(l + n + 1, NULL, 10);
	return -1;
}

static int64_t number(const char *dir, const char *file)
{
	char buf[64];
	if (get(dir, file, buf, sizeof buf) <= 0 || !isdigit((unsigned char)buf[0]))
		return -1;
	return strtoll(buf, NULL, 10);
}

/* stat_start reads a process's start from its stat file at path: clock
 * ticks since boot (field 22), as the reader's time namespace reckons
 * them. 0, or -1 with errno (EINVAL: a line it could not read). */
static int stat_start(const char *path, unsigned long long *start)
{
	char buf[1024];
	if (file_get(path, buf, sizeof buf) <= 0)
		return -1;
	char *p = strrchr(buf, ')'); /* the name may hold anything */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	char *end;
	if (!p || (*start = strtoull(p + 1, &end, 10)) == 0 || (*end != ' ' && *end != '\n')) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* ns_ino is the inode of this process's namespace of kind ns (0: the
 * kernel has none of that kind); -1 when it cannot tell. */
static int ns_ino(const char *ns, unsigned long long *ino)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/self/ns/%s", ns);
	*ino = 0;
	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	*ino = (unsigned long long)st.st_ino;
	return 0;
}

/* identify fills in who the runner is, for its cgroup's name (cg.h's
 * struct cg_self). What it cannot read stays 0, which no sweep takes
 * for a proof. */
static void identify(struct cg_self *s)
{
	memset(s, 0, sizeof *s);
	s->pid = getpid();
	/* /proc/self is this process whichever pid namespace /proc is of. */
	if (stat_start("/proc/self/stat", &s->start) < 0)
		s->start = 0;
	if (ns_ino("pid", &s->pidns) < 0)
		s->pidns = 0;
	s->timens_ok = ns_ino("time", &s->timens) == 0;
}

/* own_proc reports whether /proc is of this process's own pid namespace:
 * NSpid in /proc/self/status lists its pid in every namespace from the
 * procfs's down to its own, so one entry, its own pid, says they are the
 * same. Only then is /proc/PID the process a runner of this namespace
 * recorded as PID (a caller started in a new pid namespace without a
 * procfs of its own, unshare -p without --mount-proc, sees its parent's). */
static int own_proc(pid_t self)
{
	char buf[8192];
	if (file_get("/proc/self/status", buf, sizeof buf) <= 0)
		return 0;
	char *l = strstr(buf, "\nNSpid:"), *end;
	if (!l)
		return 0;
	long first = strtol(l + 7, &end, 10);
	while (*end == ' ' || *end == '\t')
		end++;
	return first == self && *end == '\n';
}

/* gone reports whether the process this pid namespace knew as pid, started
 * at start, is certainly gone: no such pid, or another process under it.
 * Anything else (a stat it cannot read) is not a proof. */
static int gone(pid_t pid, unsigned long long start)
{
	char path[64];
	unsigned long long now;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (stat_start(path, &now) < 0)
		return errno == ENOENT || errno == ESRCH;
	return now != start;
}

/* own_v2 is the runner's cgroup on the unified hierarchy. */
static int own_v2(char *out, size_t size)
{
	char buf[4096];
	if (file_get("/proc/self/cgroup", buf, sizeof buf) < 0)
		return -1;
	for (char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, "0::", 3) == 0) {
			size_t len = strcspn(l + 3, "\n");
			if (len + 1 > size)
				return -1;
			memcpy(out, l + 3, len);
			out[len] = 0;
			return 0;
		}
	errno = ENOENT;
	return -1;
}

/* own_base is the runner's delegated cgroup: its own, or, when it is
 * already in the leaf it moves itself to (or jail check put it there),
 * that leaf's parent. */
static int own_base(char *out, size_t size)
{
	if (own_v2(out, size) < 0)
		return -1;
	char *slash = strrchr(out, '/');
	if (slash && strcmp(slash + 1, CG_RUNNER_LEAF) == 0)
		*(slash == out ? slash + 1 : slash) = 0;
	return 0;
}

static void ctrl_list(uint32_t ctrl, char *out, size_t size)
{
	snprintf(out, size, "%s%s%s", ctrl & CG_MEMORY ? "+memory " : "", ctrl & CG_PIDS ? "+pids " : "",
		 ctrl & CG_CPU ? "+cpu " : "");
	size_t n = strlen(out);
	if (n)
		out[n - 1] = 0;
}

/* has_ctrls reports whether a cgroup v2 controllers list (subtree_control
 * or controllers) holds every one of ctrl. */
static int has_ctrls(const char *list, uint32_t ctrl)
{
	static const struct {
		uint32_t c;
		const char *name;
	} names[] = {{CG_MEMORY, "memory"}, {CG_PIDS, "pids"}, {CG_CPU, "cpu"}};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (!(ctrl & names[i].c))
			continue;
		size_t n = strlen(names[i].name);
		const char *p = list;
		int found = 0;
		while (!found && (p = strstr(p, names[i].name))) {
			found = (p == list || p[-1] == ' ') && (p[n] == 0 || p[n] == ' ' || p[n] == '\n');
			p += n;
		}
		if (!found)
			return 0;
	}
	return 1;
}

/* v2_parent readies the parent of run cgroups on the unified hierarchy:
 * it exists, and hands its children the controllers. Its own parent must
 * hand it them too; when that is the runner's own cgroup (a delegated
 * scope) and the runner is alone in it, the runner moves to a leaf of
 * its own, since a cgroup with processes cannot hand controllers down. */
static int v2_parent(const char *parent, uint32_t ctrl, int own, struct jerr *e)
{
	char buf[256], want[64], base[PATH_MAX];
	if (get(parent, "cgroup.subtree_control", buf, sizeof buf) >= 0 && has_ctrls(buf, ctrl))
		return 0;
	ctrl_list(ctrl, want, sizeof want);
	snprintf(base, sizeof base, "%s", parent);
	*strrchr(base, '/') = 0;
	if (get(base, "cgroup.subtree_control", buf, sizeof buf) < 0)
		return jerr_set(e, errno, "cgroup v2: read %s/cgroup.subtree_control", base);
	if (!has_ctrls(buf, ctrl) && put(base, "cgroup.subtree_control", want) < 0) {
		int err = errno;
		char leaf[PATH_MAX + 16];
		snprintf(leaf, sizeof leaf, "%s/%s", base, CG_RUNNER_LEAF);
		if (err != EBUSY || !own || (mkdir(leaf, 0755) < 0 && errno != EEXIST) || put(leaf, "cgroup.procs", "0") < 0 ||
		    put(base, "cgroup.subtree_control", want) < 0)
			return jerr_set(e, err,
					"cgroup v2: hand %s down from %s (it holds processes, so it cannot; fix: start jail in a "
					"delegated scope of its own, systemd-run --user --scope -p Delegate=yes jail ..., or "
					"set limits.cgroup_parent)",
					want, base);
	}
	if (mkdir(parent, 0755) < 0 && errno != EEXIST)
		return jerr_set(e, errno, "cgroup v2: make %s", parent);
	if (put(parent, "cgroup.subtree_control", want) < 0)
		return jerr_set(e, errno, "cgroup v2: enable %s in %s", want, parent);
	return 0;
}

/* limit writes the plan's limits into the run's cgroup in one hierarchy. */
static int limit(const struct cg_plan *p, const char *dir, uint32_t ctrl, int v2, struct jerr *e)
{
	char v[64];
	if ((ctrl & CG_MEMORY) && p->memory) {
		snprintf(v, sizeof v, "%llu", (unsigned long long)p->memory);
		if (put(dir, v2 ? "memory.max" : "memory.limit_in_bytes", v) < 0)
			return jerr_set(e, errno, "cgroup: set the memory limit in %s", dir);
		/* No swap: a memory limit that swaps is a slow one. Without
		 * swap accounting the file is missing, and there is no swap
		 * to limit per cgroup. */
		if (put(dir, v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes", v2 ? "0" : v) < 0) {
			if (errno != ENOENT)
				return jerr_set(e, errno, "cgroup: set the swap limit in %s", dir);
			/* No swap accounting: as near to none as v1 goes (the
			 * plan's record says swap is not limited if any is on). */
			if (!v2 && put(dir, "memory.swappiness", "0") < 0)
				return jerr_set(e, errno, "cgroup: set memory.swappiness in %s", dir);
		}
	}
	if ((ctrl & CG_PIDS) && p->pids) {
		snprintf(v, sizeof v, "%u", p->pids);
		if (put(dir, "pids.max", v) < 0)
			return jerr_set(e, errno, "cgroup: set the process limit in %s", dir);
	}
	if ((ctrl & CG_CPU) && p->cpu_quota_us) {
		if (v2) {
			snprintf(v, sizeof v, "%u %u", p->cpu_quota_us, p->cpu_period_us);
			if (put(dir, "cpu.max", v) < 0)
				return jerr_set(e, errno, "cgroup: set the CPU limit in %s", dir);
		} else {
			snprintf(v, sizeof v, "%u", p->cpu_period_us);
			if (put(dir, "cpu.cfs_period_us", v) < 0)
				return jerr_set(e, errno, "cgroup: set the CPU period in %s", dir);
			snprintf(v, sizeof v, "%u", p->cpu_quota_us);
			if (put(dir, "cpu.cfs_quota_us", v) < 0)
				return jerr_set(e, errno, "cgroup: set the CPU limit in %s", dir);
		}
	}
	return 0;
}

int cg_create(const struct cg_plan *p, struct cg_run *r, struct jerr *e)
{
	memset(r, 0, sizeof *r);
	r->dir_fd = r->pids_events = r->freeze = r->events = -1;
	r->v2 = !!(p->flags & CG_V2);
	char name[96], own[PATH_MAX];
	identify(&r->self);
	snprintf(name, sizeof name, CG_RUN_NAME, (int)r->self.pid, r->self.start, r->self.pidns, r->self.timens);
	if ((p->flags & CG_OWN) && own_base(own, sizeof own) < 0)
		return jerr_set(e, errno, "cgroup v2: find jail's own cgroup in /proc/self/cgroup");
	for (uint32_t i = 0; i < p->ndirs; i++) {
		char parent[PATH_MAX];
		int len;
		if (p->flags & CG_OWN)
			len = snprintf(parent, sizeof parent, "%s%s/%s", CG_UNIFIED, strcmp(own, "/") ? own : "", p->dirs[i].path);
		else
			len = snprintf(parent, sizeof parent, "%s", p->dirs[i].path);
		if (len < 0 || (size_t)len >= sizeof parent - 64) {
			jerr_set(e, ENAMETOOLONG, "cgroup: %s", parent);
			goto fail;
		}
		if (r->v2) {
			if (v2_parent(parent, p->dirs[i].ctrl, !!(p->flags & CG_OWN), e) < 0)
				goto fail;
		} else if (mkdir(parent, 0755) < 0 && errno != EEXIST) {
			jerr_set(e, errno, "cgroup: make %s (jail check tells how to delegate it)", parent);
			goto fail;
		}
		/* Root's runs only under a parent only root can write (also
		 * for a cached plan, which place.go checked once): another user
		 * could rename the run's cgroup away and plant their own. */
		struct stat pst;
		if (geteuid() == 0 && (stat(parent, &pst) < 0 || pst.st_uid != 0 || (pst.st_mode & 022))) {
			jerr_set(e, 0, "cgroup: %s is not root's alone; use a parent only root can write", parent);
			goto fail;
		}
		int n = snprintf(r->path[r->n], sizeof r->path[r->n], "%s/%s", parent, name);
		if (n < 0 || (size_t)n >= sizeof r->path[r->n]) {
			jerr_set(e, ENAMETOOLONG, "cgroup: %s", parent);
			goto fail;
		}
		if (mkdir(r->path[r->n], 0755) < 0) {
			int err = errno;
			if (err == EACCES || err == EPERM || err == EROFS)
				jerr_set(e, err,
					 "cgroup: make %s; fix: run jail as root, %s, or run with --limits-mode best-effort "
					 "(jail check says how for this caller)",
					 r->path[r->n],
					 r->v2 ? "or in a delegated scope of its own (systemd-run --user --scope -p Delegate=yes jail ...)"
					       : "or have root delegate the parent to this user");
			else
				jerr_set(e, err, "cgroup: make %s", r->path[r->n]);
			goto fail;
		}
		r->ctrl[r->n++] = p->dirs[i].ctrl;
		if (limit(p, r->path[r->n - 1], p->dirs[i].ctrl, r->v2, e) < 0)
			goto fail;
		if ((p->dirs[i].ctrl & CG_PIDS) && p->pids) {
			char path[PATH_MAX + 16], buf[64];
			snprintf(path, sizeof path, "%s/pids.events", r->path[r->n - 1]);
			r->pids_events = open(path, O_RDONLY | O_CLOEXEC);
			/* Read once: poll wakes for changes since the last read. */
			if (r->pids_events < 0 || pread(r->pids_events, buf, sizeof buf, 0) < 0) {
				jerr_set(e, errno, "cgroup: open %s", path);
				goto fail;
			}
		}
	}
	if (r->v2 && (r->dir_fd = open(r->path[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		jerr_set(e, errno, "cgroup: open %s", r->path[0]);
		goto fail;
	}
	/* The freezer (5.2+; without it jail stops its jail with SIGSTOP). */
	if (r->v2) {
		r->freeze = openat(r->dir_fd, "cgroup.freeze", O_WRONLY | O_CLOEXEC);
		r->events = r->freeze >= 0 ? openat(r->dir_fd, "cgroup.events", O_RDONLY | O_CLOEXEC) : -1;
		char buf[256];
		if (r->events >= 0 && pread(r->events, buf, sizeof buf, 0) < 0) {
			close(r->events);
			r->events = -1;
		}
	}
	return 0;
fail:
	cg_remove(r);
	return -1;
}

int cg_attach(const struct cg_run *r, pid_t pid, struct jerr *e)
{
	char v[32];
	snprintf(v, sizeof v, "%d", (int)pid);
	for (int i = 0; !r->v2 && i < r->n; i++)
		if (put(r->path[i], "cgroup.procs", v) < 0)
			return jerr_set(e, errno, "cgroup: move the jail into %s", r->path[i]);
	return 0;
}

int cg_join(const struct cg_run *r, pid_t pid, struct jerr *e)
{
	char v[32];
	snprintf(v, sizeof v, "%d", (int)pid);
	for (int i = 0; i < r->n; i++)
		if (put(r->path[i], "cgroup.procs", v) < 0)
			return jerr_set(e, errno, "cgroup: move into %s", r->path[i]);
	return 0;
}

int cg_pids_hit(const struct cg_run *r)
{
	char buf[128];
	if (r->pids_events < 0)
		return 0;
	ssize_t n = pread(r->pids_events, buf, sizeof buf - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	return keyed(buf, "max") > 0;
}

void cg_thaw(const struct cg_run *r)
{
	char buf[256];
	if (r->freeze < 0)
		return;
	/* Read, for cgroup.events to notify the next change; the write goes
	 * whatever it says (a freeze still under way says frozen 0), and
	 * changes nothing when the jail is not frozen. Should it fail, the
	 * jail stays frozen until its time limit kills it (SIGKILL reaches
	 * frozen processes). */
	if (r->events >= 0 && pread(r->events, buf, sizeof buf - 1, 0) < 0)
		buf[0] = 0;
	ssize_t w = write(r->freeze, "0", 1);
	(void)w;
}

void cg_measure(const struct cg_run *r, struct cg_usage *u)
{
	char buf[1024];
	*u = (struct cg_usage){-1, -1, -1, -1, -1, -1, -1};
	for (int i = 0; i < r->n; i++) {
		const char *d = r->path[i];
		if (r->ctrl[i] & CG_MEMORY) {
			u->memory_peak = number(d, r->v2 ? "memory.peak" : "memory.max_usage_in_bytes");
			/* oom_kill, not oom: an OOM can be charged to an ancestor
			 * whose limit is the same, and the kill still counts here. */
			if (get(d, r->v2 ? "memory.events" : "memory.oom_control", buf, sizeof buf) > 0)
				u->oom_kills = keyed(buf, "oom_kill");
		}
		if (r->ctrl[i] & CG_PIDS) {
			if (get(d, "pids.events", buf, sizeof buf) > 0)
				u->pids_max = keyed(buf, "max");
			u->pids_peak = number(d, "pids.peak");
		}
		if (r->v2 && get(d, "cpu.stat", buf, sizeof buf) > 0) {
			u->cpu_user_us = keyed(buf, "user_usec");
			u->cpu_system_us = keyed(buf, "system_usec");
			u->cpu_throttled = keyed(buf, "nr_throttled");
		}
		if (!r->v2 && (r->ctrl[i] & CG_CPUACCT)) {
			/* cpuacct.usage is exact; its user/system split is
			 * sampled at ticks, so it only divides the total (and a
			 * run too short for a tick is left to the wait status). */
			int64_t total = number(d, "cpuacct.usage");
			int64_t user = number(d, "cpuacct.usage_user"), sys = number(d, "cpuacct.usage_sys");
			if (total >= 0 && user >= 0 && sys >= 0 && user + sys > 0) {
				u->cpu_user_us = (int64_t)((double)total * (double)user / (double)(user + sys)) / 1000;
				u->cpu_system_us = total / 1000 - u->cpu_user_us;
			}
		}
		if (!r->v2 && (r->ctrl[i] & CG_CPU) && get(d, "cpu.stat", buf, sizeof buf) > 0)
			u->cpu_throttled = keyed(buf, "nr_throttled");
	}
}

/* empty kills whatever is still in the cgroup at dir and removes it,
 * waiting a little for the dying to leave; 0 when it is gone. */
static int empty(const char *dir, int v2, int kill_left)
{
	for (int tries = 0; tries < 200; tries++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY || !kill_left)
			return -1;
		if (v2 && put(dir, "cgroup.kill", "1") == 0) {
			/* every process is dying */
		} else {
			/* Whole lines only: a pid cut off by the buffer's end
			 * would be another process's. */
			char buf[65536];
			ssize_t n = get(dir, "cgroup.procs", buf, sizeof buf);
			char *end = n > 0 ? strrchr(buf, '\n') : NULL;
			for (char *l = buf; end && l < end; l = strchr(l, '\n') + 1) {
				long pid = strtol(l, NULL, 10);
				if (pid > 0)
					kill((pid_t)pid, SIGKILL);
			}
		}
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	return -1;
}

/* parent_of is the directory of a run's cgroup. */
static void parent_of(const char *run, char *out, size_t size)
{
	snprintf(out, size, "%s", run);
	char *slash = strrchr(out, '/');
	if (slash)
		*slash = 0;
}

/* sweep removes, next to a run's cgroup, the cgroups of runs whose runner
 * is gone: jail killed with SIGKILL cannot remove its own. Its jail died
 * with it (PDEATHSIG), so only empty cgroups go (rmdir refuses the others,
 * on v1 and v2). An empty cgroup may still be a live run's, though: made
 * and not yet joined, or a v1 run's hierarchies joined one after another,
 * or a run measured after its jail ended. So a cgroup goes only when its
 * name proves its runner gone: recorded in this runner's pid and time
 * namespaces (a container that sees the host's cgroups sees runs of
 * other pid namespaces, whose pids mean other processes here), looked up
 * through a /proc of this pid namespace, and no process there under that
 * pid with that start. Names of any other form (older jails', other
 * namespaces', ones with a part the runner could not read) are left to
 * their own runs, or to reboot. Every hierarchy is read: a runner killed
 * while it removed its cgroups leaves some hierarchies' and not others'. */
static void sweep(const struct cg_run *r)
{
	const struct cg_self *me = &r->self;
	if (!me->pidns || !me->timens_ok || !own_proc(me->pid))
		return;
	for (int i = 0; i < r->n; i++) {
		char parent[PATH_MAX];
		parent_of(r->path[i], parent, sizeof parent);
		DIR *d = opendir(parent);
		if (!d)
			continue;
		struct dirent *de;
		while ((de = readdir(d))) {
			int pid;
			unsigned long long start, pidns, timens;
			char tail;
			if (de->d_type != DT_DIR ||
			    sscanf(de->d_name, CG_RUN_NAME "%c", &pid, &start, &pidns, &timens, &tail) != 4)
				continue;
			/* The name exactly as a runner writes it: no sign, space or
			 * wrapped number makes two names one runner. */
			char again[NAME_MAX + 1];
			snprintf(again, sizeof again, CG_RUN_NAME, pid, start, pidns, timens);
			if (strcmp(again, de->d_name) != 0)
				continue;
			if (pid <= 0 || start == 0 || pidns != me->pidns || timens != me->timens || !gone(pid, start))
				continue; /* live (this run's own, too), or not provably gone */
			unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
		}
		closedir(d);
	}
}

void cg_remove(struct cg_run *r)
{
	/* Thawed first: a frozen leftover would not die of its SIGKILL
	 * until it is. */
	ssize_t w = r->freeze >= 0 ? write(r->freeze, "0", 1) : 0;
	(void)w;
	int fds[] = {r->pids_events, r->dir_fd, r->freeze, r->events};
	for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	r->pids_events = r->dir_fd = r->freeze = r->events = -1;
	/* Last made, first removed: a runner killed on the way leaves a
	 * prefix of what cg_create made, which the next run's sweep finds. */
	for (int i = r->n - 1; i >= 0; i--)
		empty(r->path[i], r->v2, 1);
	if (r->n)
		sweep(r);
	r->n = 0;
}
