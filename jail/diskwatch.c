/* The disk limits, watched by the runner every 10 ms while the jail runs.
 *
 * The reserve: each filesystem a writable bind is on keeps a share of free
 * space (fstatvfs on an O_PATH fd of the bind's source, ~0.5 us); below it,
 * the jail is killed, whatever wrote: the guard that keeps any jail from
 * filling the host's disk.
 *
 * The disk limit: the bytes the jail's processes write to disk-backed
 * files, read from /proc/PID/io's write_bytes (counted when a page is
 * dirtied, so at the write, mmap'd writes and O_DIRECT included; tmpfs and
 * pipes not). A process's count holds every child it reaped, so the
 * jail's live processes (its cgroup's, or PID 1's tree without one) sum to
 * all it wrote. No kernel interface bounds what an unprivileged user
 * writes to a directory (project quotas need root and a filesystem made
 * for them; cgroup v1 blkio counts no buffered write), so this is a kill
 * after the fact: a jail writing at memory speed goes past the limit by
 * what it writes in 10 ms. fallocate, which allocates without writing, is
 * refused by the filter (jail/disk.go).
 *
 * The runner runs it: C, before the Go runtime, as the whole runner is
 * (runner.c). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal/linux/file.h"
#include "jail/diskwatch.h"
#include "jail/report.h"
#include "jail/runlimits.h"
#include "jail/runner.h"

/* fmt_about writes n rounded, for a person: "70M", "31.9G". */
static void fmt_about(uint64_t n, char *out, size_t size)
{
	if (n % (1u << 20) == 0) {
		fmt_bytes(n, out, size);
		return;
	}
	if (n >= 1ull << 30)
		snprintf(out, size, "%.1fG", (double)n / (double)(1ull << 30));
	else if (n >= 1ull << 20)
		snprintf(out, size, "%lluM", (unsigned long long)((n + (1ull << 19)) >> 20));
	else
		snprintf(out, size, "%lluK", (unsigned long long)((n + 512) >> 10));
}

/* reserve_of is the free space a filesystem of size bytes keeps, as
 * jail/disk.go's reserveOf: the reserve, or the percentage, or the
 * smaller of both. */
static uint64_t reserve_of(const struct run_plan *p, uint64_t size)
{
	uint64_t r = p->disk_reserve;
	if (p->disk_percent) {
		uint64_t pct = size / 100 * p->disk_percent;
		if (!r || pct < r)
			r = pct;
	}
	return r;
}

/* ireserve_of is the inodes a filesystem of n keeps free: the reserve's
 * percentage (5% without one), at most 1M. A filesystem of empty files
 * is as full as one of data; one without an inode limit (btrfs) reports 0. */
static uint64_t ireserve_of(const struct run_plan *p, uint64_t n)
{
	uint64_t r = n / 100 * (p->disk_percent ? p->disk_percent : 5);
	return r < (1u << 20) ? r : (1u << 20);
}

static uint64_t free_bytes(const struct statvfs *st) { return (uint64_t)st->f_bavail * st->f_frsize; }

int disk_open(struct disk *d, const struct run_plan *p, struct jerr *e)
{
	struct wire w = p->disk_binds;
	dev_t seen[DISK_MAX_FS];
	d->timer = d->account = -1;
	d->limit = p->disk_limit ? p->disk_limit : UINT64_MAX;
	if (p->session_disk && account_open(d, p, e) < 0)
		return -1;
	wire_u32(&w);
	for (uint32_t i = 0; i < p->ndisk; i++) {
		const char *src = wire_str(&w), *dst = wire_str(&w);
		int fd = open(src, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		struct statvfs vfs;
		if (fd < 0 || fstat(fd, &st) < 0 || fstatvfs(fd, &vfs) < 0) {
			int err = errno;
			if (fd >= 0)
				close(fd);
			return jerr_set(e, err, "writable bind %s on %s: its filesystem's free space cannot be watched", src, dst);
		}
		int dup = 0;
		for (int k = 0; k < d->nfs; k++)
			dup |= seen[k] == st.st_dev;
		if (dup || d->nfs == DISK_MAX_FS) {
			close(fd);
			if (dup)
				continue;
			return jerr_set(e, 0, "more than %d filesystems hold writable binds", DISK_MAX_FS);
		}
		uint64_t size = (uint64_t)vfs.f_blocks * vfs.f_frsize, reserve = reserve_of(p, size);
		uint64_t ireserve = ireserve_of(p, vfs.f_files);
		if (vfs.f_favail < ireserve) {
			close(fd);
			return jerr_set(e, 0,
					"the filesystem holding %s (%s) has %llu free inodes, fewer than the %llu it keeps free "
					"(limits.disk_reserve): remove files from it",
					dst, src, (unsigned long long)vfs.f_favail, (unsigned long long)ireserve);
		}
		if (free_bytes(&vfs) < reserve) {
			char f[32], r[32];
			fmt_about(free_bytes(&vfs), f, sizeof f);
			fmt_about(reserve, r, sizeof r);
			close(fd);
			return jerr_set(e, 0,
					"the filesystem holding %s (%s) has %s free, less than the %s it keeps free "
					"(limits.disk_reserve): free space on it, or lower the reserve",
					dst, src, f, r);
		}
		seen[d->nfs] = st.st_dev;
		d->fs[d->nfs].fd = fd;
		d->fs[d->nfs].reserve = reserve;
		d->fs[d->nfs].ireserve = ireserve;
		d->fs[d->nfs].dst = dst;
		d->nfs++;
	}
	return 0;
}

/* The watch's period: 10 ms, and 1 ms while a filesystem is within
 * CLOSE of its reserve, where 10 ms of writes at memory speed (~4 GiB/s
 * here) would take it below. */
#define TICK_NS 10000000L
#define CLOSE_TICK_NS 1000000L
#define CLOSE (256ull << 20)

static int set_tick(struct disk *d, long ns)
{
	struct itimerspec every = {.it_interval = {0, ns}, .it_value = {0, ns}};
	d->tick_ns = ns;
	return timerfd_settime(d->timer, 0, &every, NULL);
}

int disk_arm(struct disk *d, const struct run_plan *p, struct jerr *e)
{
	if (!d->nfs && d->limit == UINT64_MAX)
		return 0;
	/* A kernel without task I/O accounting is refused when the run is
	 * planned (jail/disk.go), not read again on every call. */
	d->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->timer < 0 || set_tick(d, TICK_NS) < 0)
		return jerr_set(e, errno, "timerfd for the disk limits");
	return 0;
}

/* io_written is /proc/PID/io's write_bytes: what the process and every
 * child it reaped wrote; 0 once it is gone (ENOENT, ESRCH). A process that
 * is not dumpable is the host's root's there (PID 1, the command's
 * process before its exec, the network helper; and, in a jail, one that
 * said PR_SET_DUMPABLE 0, as ssh does, or runs an execute-only program):
 * an unprivileged runner cannot read it (EACCES), and counts it when it
 * ends, in the parent that reaps it (PID 1 reports its own). Any other
 * failure sets *bad: a count that cannot be read must not pass for none. */
static uint64_t io_written(pid_t pid, int *bad)
{
	char path[32], buf[512];
	snprintf(path, sizeof path, "/proc/%d/io", (int)pid);
	if (file_get(path, buf, sizeof buf) <= 0) {
		if (errno != ENOENT && errno != ESRCH && errno != EACCES)
			*bad = 1;
		return 0;
	}
	const char *s = strstr(buf, "\nwrite_bytes: ");
	if (!s)
		*bad = 1;
	return s ? strtoull(s + 14, NULL, 10) : 0;
}

/* struct pids reads a list of pids in decimal, a chunk at a time. */
struct pids {
	pid_t *v;
	size_t n, cap;
};

static void pids_add(struct pids *l, pid_t pid)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		pid_t *v = realloc(l->v, cap * sizeof *v);
		if (!v)
			return;
		l->v = v, l->cap = cap;
	}
	l->v[l->n++] = pid;
}

/* pids_read adds the pids of the file at path (cgroup.procs, a task's
 * children); -1 if it cannot be opened. */
static int pids_read(struct pids *l, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[4096];
	long cur = 0;
	int have = 0;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] >= '0' && buf[i] <= '9') {
				cur = cur * 10 + (buf[i] - '0'), have = 1;
				continue;
			}
			if (have && cur > 0 && cur <= INT_MAX)
				pids_add(l, (pid_t)cur);
			cur = have = 0;
		}
	if (have && cur > 0 && cur <= INT_MAX)
		pids_add(l, (pid_t)cur);
	close(fd);
	return 0;
}

/* jail_pids lists the jail's processes: its cgroup's, or, without one,
 * PID 1's tree, each of its threads' children in turn (orphans are PID
 * 1's in its pid namespace). */
static void jail_pids(const struct runner *r, struct pids *l)
{
	char path[PATH_MAX + 32];
	if (r->cg.n) {
		snprintf(path, sizeof path, "%s/cgroup.procs", r->cg.path[0]);
		if (pids_read(l, path) == 0)
			return;
	}
	pids_add(l, r->pid1);
	for (size_t i = 0; i < l->n; i++) {
		snprintf(path, sizeof path, "/proc/%d/task", (int)l->v[i]);
		DIR *dir = opendir(path);
		if (!dir)
			continue;
		struct dirent *de;
		while ((de = readdir(dir)))
			if (de->d_name[0] != '.') {
				snprintf(path, sizeof path, "/proc/%d/task/%s/children", (int)l->v[i], de->d_name);
				pids_read(l, path);
			}
		closedir(dir);
	}
}

/* jail_written sums what the jail's live processes wrote; *bad is set
 * when one could not be read. */
static uint64_t jail_written(const struct runner *r, int *bad)
{
	struct pids l = {0};
	uint64_t sum = 0;
	jail_pids(r, &l);
	for (size_t i = 0; i < l.n; i++) {
		/* PID 1 never exec'd and is not dumpable: an unprivileged
		 * runner cannot read it, so it reports its count itself. */
		int b = 0;
		uint64_t n = io_written(l.v[i], &b);
		if (l.v[i] == r->pid1 && (b || r->disk.pid1_written > n))
			n = r->disk.pid1_written, b = 0;
		*bad |= b;
		sum += n;
	}
	free(l.v);
	return sum;
}

static void disk_hit(struct runner *r, int what)
{
	r->disk.hit = what;
	kill_jail(r);
	close(r->disk.timer);
	r->disk.timer = -1;
}

void on_disk(struct runner *r, short revents)
{
	struct disk *d = &r->disk;
	uint64_t ticks;
	if (read(d->timer, &ticks, sizeof ticks) < 0 && errno == EAGAIN)
		return;
	int close_to = 0;
	for (int i = 0; i < d->nfs; i++) {
		struct statvfs vfs;
		if (fstatvfs(d->fs[i].fd, &vfs) < 0)
			continue;
		uint64_t left = free_bytes(&vfs);
		int inodes = vfs.f_favail < d->fs[i].ireserve;
		if (left < d->fs[i].reserve || inodes) {
			d->hit_fs = i, d->hit_free = inodes ? vfs.f_favail : left, d->hit_inodes = inodes;
			disk_hit(r, DISK_RESERVE_HIT);
			return;
		}
		close_to |= left - d->fs[i].reserve < CLOSE;
	}
	long tick = close_to ? CLOSE_TICK_NS : TICK_NS;
	if (tick != d->tick_ns)
		set_tick(d, tick);
	if (d->limit == UINT64_MAX || !r->pid1)
		return;
	/* A child reaped between reading it and its parent counts twice in
	 * one sum, never in two: past the limit is read again. */
	int bad = 0;
	uint64_t n = jail_written(r, &bad);
	if (n > d->limit)
		n = jail_written(r, &bad);
	if (n > d->written)
		d->written = n;
	if (d->account >= 0 && d->written - d->committed >= d->step)
		account_commit(d, r->plan);
	if (bad) {
		r->o.fatal = "jail could not read what the jail writes (/proc/PID/io), so its disk limit could not hold: the run was ended";
		disk_hit(r, 0);
	} else if (n > d->limit) {
		disk_hit(r, DISK_LIMIT_HIT);
	}
}

void disk_final(struct runner *r)
{
	struct disk *d = &r->disk;
	if (!r->pid1 || (!d->nfs && d->limit == UINT64_MAX))
		return;
	/* PID 1's rusage holds every process of the jail, reaped by it or,
	 * as its pid namespace died with it, by the kernel in its name:
	 * write_bytes in 512-byte blocks. */
	uint64_t n = (uint64_t)r->o.ru.ru_oublock * 512;
	if (d->pid1_written > n)
		n = d->pid1_written;
	if (n > d->written)
		d->written = n;
	d->measured = 1;
	/* Past the limit between the last tick and its end: the limit's
	 * run all the same, as it would have been a moment later. */
	account_commit(d, r->plan);
	if (d->written > d->limit && !d->hit)
		d->hit = DISK_LIMIT_HIT;
}

void disk_line(const struct run_plan *p, const struct disk *d, char *buf, size_t size)
{
	char v[32], f[32];
	buf[0] = 0;
	if (d->hit == DISK_RESERVE_HIT && d->hit_inodes) {
		snprintf(buf, size, "killed: the filesystem holding %s fell to %llu free inodes, below the %llu it keeps free (limits.disk_reserve)",
			 d->fs[d->hit_fs].dst, (unsigned long long)d->hit_free, (unsigned long long)d->fs[d->hit_fs].ireserve);
		return;
	}
	if (d->hit == DISK_RESERVE_HIT) {
		fmt_about(d->fs[d->hit_fs].reserve, v, sizeof v);
		fmt_about(d->hit_free, f, sizeof f);
		snprintf(buf, size, "killed: the filesystem holding %s fell to %s free, below the %s it keeps free (limits.disk_reserve)",
			 d->fs[d->hit_fs].dst, f, v);
		return;
	}
	if (d->hit != DISK_LIMIT_HIT)
		return;
	fmt_bytes(d->by_session ? p->session_disk : p->disk_limit, v, sizeof v);
	if (d->by_session) {
		char u[32];
		fmt_about(d->session_used, u, sizeof u);
		snprintf(buf, size,
			 "killed: session disk limit %s reached in /workspace (it holds about %s: delete what it no longer needs, "
			 "or start afresh: jail sessions rm %s)",
			 v, u, p->session);
		return;
	}
	int n = snprintf(buf, size, "killed: disk limit %s reached in ", v);
	struct wire w = p->disk_binds;
	wire_u32(&w);
	for (uint32_t i = 0; i < p->ndisk && n > 0 && (size_t)n < size; i++) {
		wire_str(&w);
		n += snprintf(buf + n, size - (size_t)n, "%s%s", i ? ", " : "", wire_str(&w));
	}
	if (!p->ndisk)
		snprintf(buf, size, "killed: disk limit %s reached", v);
}
