/* A session's disk account (limits.session_disk): SESSION/disk, "HELD
 * SINCE\n", the bytes its workspace held when last measured and what its
 * runs wrote since, under flock (runs of one session may overlap). What is
 * written is counted as held until measured: deletions and rewrites are
 * seen by the walk, which runs at a run's start when the writes since
 * pass a tenth of the limit and the sum half of it, or when the sum is at
 * the limit (what a call deleted to make room is seen by the next). A run
 * adds what it writes as it goes, a step at a time, so overlapping runs see
 * each other's writes and a runner killed outright loses at most a step.
 * The runner runs it: C, before the Go runtime, as the whole runner is
 * (runner.c). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jail/diskwatch.h"
#include "jail/runplan.h"

/* The walk goes no deeper: deeper trees are counted as written, never
 * as less. */
#define WALK_DEPTH 256

static void account_get(int fd, uint64_t *held, uint64_t *since)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	unsigned long long h = 0, s = 0;
	if (sscanf(buf, "%llu %llu", &h, &s) != 2)
		h = s = 0;
	*held = h, *since = s;
}

static void account_put(int fd, uint64_t held, uint64_t since)
{
	char buf[64];
	int n = snprintf(buf, sizeof buf, "%llu %llu\n", (unsigned long long)held, (unsigned long long)since);
	if (pwrite(fd, buf, (size_t)n, 0) == n && ftruncate(fd, n) < 0)
		return;
}

/* usage is what the tree under dir (an fd it closes) holds on disk:
 * st_blocks, never through a link or onto another filesystem. *partial is
 * set when it could not see all of it (too deep, a directory it may not
 * open): its sum is then no measure. */
static uint64_t usage(int dir, dev_t dev, int depth, int *partial)
{
	DIR *d = fdopendir(dir);
	if (!d) {
		close(dir);
		*partial = 1;
		return 0;
	}
	uint64_t sum = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			*partial |= errno != ENOENT;
			continue;
		}
		if (st.st_dev != dev)
			continue;
		sum += (uint64_t)st.st_blocks * 512;
		if (!S_ISDIR(st.st_mode))
			continue;
		int sub = depth < WALK_DEPTH ? openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		if (sub < 0)
			*partial = 1;
		else
			sum += usage(sub, dev, depth + 1, partial);
	}
	closedir(d);
	return sum;
}

/* measure walks the session's workspace; 0 with *partial set when it
 * cannot be seen whole. */
static uint64_t measure(const struct run_plan *p, int *partial)
{
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof path, "%s/workspace", p->session_dir);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		*partial = 1;
		return 0;
	}
	return usage(fd, st.st_dev, 0, partial);
}

static void lock(int fd)
{
	while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
		;
}

/* limit_left makes the run's limit what it has added to the account plus
 * what the session has left (less what the session is over by), when that
 * is below the run's own. */
static void limit_left(struct disk *d, const struct run_plan *p)
{
	uint64_t used = d->session_used, max = p->session_disk, mine = d->committed, lim;
	if (used <= max)
		lim = mine + (max - used);
	else
		lim = mine > used - max ? mine - (used - max) : 0;
	uint64_t run = p->disk_limit ? p->disk_limit : UINT64_MAX;
	d->limit = run, d->by_session = 0;
	if (lim < run)
		d->limit = lim, d->by_session = 1;
}

int account_open(struct disk *d, const struct run_plan *p, struct jerr *e)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/disk", p->session_dir);
	d->account = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	struct stat st;
	if (d->account < 0 || fstat(d->account, &st) < 0 || !S_ISREG(st.st_mode))
		return jerr_set(e, d->account < 0 ? errno : 0, "session %s: its disk account %s", p->session, path);
	lock(d->account);
	uint64_t held, since;
	account_get(d->account, &held, &since);
	uint64_t sum = held + since;
	if (sum >= p->session_disk || (since > p->session_disk / 10 && sum > p->session_disk / 2)) {
		int partial = 0;
		uint64_t now = measure(p, &partial);
		if (!partial || now > sum)
			held = now, since = 0, sum = now;
		account_put(d->account, held, since);
	}
	flock(d->account, LOCK_UN);
	d->session_used = sum;
	d->step = p->session_disk / 64 > (1u << 20) ? p->session_disk / 64 : (1u << 20);
	limit_left(d, p);
	return 0;
}

void account_commit(struct disk *d, const struct run_plan *p)
{
	if (d->account < 0 || d->written <= d->committed)
		return;
	lock(d->account);
	uint64_t held, since;
	account_get(d->account, &held, &since);
	since += d->written - d->committed;
	account_put(d->account, held, since);
	flock(d->account, LOCK_UN);
	d->committed = d->written;
	d->session_used = held + since;
	limit_left(d, p);
}
