/* The plan cache's store, run by the runner when Go has planned a run: the
 * plan goes into an entry (entry.h) for the next identical invocation,
 * written whole or not at all, in the caller's private directory, which is
 * kept to a bounded size. It is C because the lookup is (lookup.c): one
 * language owns the key, the entries and their directory. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "plancache/entry.h"
#include "plancache/plancache.h"

/* Bounds on the cache: it lives in memory (/run, most often), and an
 * invocation whose flags change with every run (a new --env value, say)
 * adds an entry each time. Past MAX_ENTRIES, the least recently used go,
 * down to KEEP_ENTRIES. */
#define MAX_ENTRIES 64
#define KEEP_ENTRIES 48

/* STALE_NEW_NS is how old (ns) a half-written entry is when prune takes it
 * for one whose writer was killed before its rename. */
#define STALE_NEW_NS (60ull * 1000000000ull)

/* deps_valid says deps are what pc_dep_read reads, to their end: the lookup
 * would find no plan after anything else. */
static int deps_valid(const char *deps, size_t dlen)
{
	struct wire w = {.p = (const unsigned char *)deps, .end = (const unsigned char *)deps + dlen};
	struct pc_dep d;
	for (uint32_t n = wire_u32(&w); n > 0 && !w.bad; n--)
		pc_dep_read(&w, &d);
	return !w.bad && w.p == w.end;
}

/* write_entry writes buf as dir's entry name: into a new file of its own,
 * renamed over name when whole, so a reader sees the old entry or the new
 * one, never a part. */
static int write_entry(int dir, const char *name, const unsigned char *buf, size_t n)
{
	char tmp[64];
	struct timespec t;
	int fd = -1;
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (unsigned i = 0; fd < 0 && i < 8; i++) {
		snprintf(tmp, sizeof tmp, PC_NEW "%d-%llx", (int)getpid(), (unsigned long long)pc_ns(t) + i);
		/* O_EXCL: never through a link or into a file already there. */
		fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return -1;
	}
	if (fd < 0)
		return -1;
	size_t done = 0;
	while (done < n) {
		ssize_t w = write(fd, buf + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	if (close(fd) == 0 && done == n && renameat(dir, tmp, dir, name) == 0)
		return 0;
	unlinkat(dir, tmp, 0);
	return -1;
}

struct aged {
	char *name;
	uint64_t mtime;
};

static int newest_first(const void *a, const void *b)
{
	uint64_t x = ((const struct aged *)a)->mtime, y = ((const struct aged *)b)->mtime;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* prune removes the half-written entries a killed jail left, then, past
 * MAX_ENTRIES, the least recently used (a hit touches its entry). */
static void prune(int dir)
{
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct aged *all = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    fstatat(dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (strncmp(de->d_name, PC_NEW, strlen(PC_NEW)) == 0 && pc_ns(now) > pc_ns(st.st_mtim) + STALE_NEW_NS) {
			unlinkat(dir, de->d_name, 0);
			continue;
		}
		if (n == cap) {
			size_t more = cap * 2 + 64;
			struct aged *p = realloc(all, more * sizeof *all);
			if (!p)
				break;
			all = p, cap = more;
		}
		if (!(all[n].name = strdup(de->d_name)))
			break;
		all[n++].mtime = pc_ns(st.st_mtim);
	}
	closedir(d);
	if (n > MAX_ENTRIES) {
		qsort(all, n, sizeof *all, newest_first);
		for (size_t i = KEEP_ENTRIES; i < n; i++)
			unlinkat(dir, all[i].name, 0);
	}
	for (size_t i = 0; i < n; i++)
		free(all[i].name);
	free(all);
}

/* put_entry writes an entry (entry.h): the key, the deps as Go encoded
 * them, the plan. */
static void put_entry(struct wire_out *w, const struct pc_key *k, const char *deps, size_t dlen, const unsigned char *plan,
		      size_t len)
{
	wire_put_u32(w, PC_MAGIC);
	wire_put_u32(w, PC_VERSION);
	wire_put_bytes(w, k->p, k->len);
	wire_put(w, deps, dlen);
	wire_put_bytes(w, plan, len);
}

int pc_store(const struct pc_env *e, char **argv, const unsigned char *plan, size_t len, const char *deps, size_t dlen)
{
	struct pc_key k = {0};
	struct wire_out w = {0};
	int dir = -1, r = -1;
	size_t n = 0;
	if (dlen == 0 || !deps_valid(deps, dlen) || pc_make_key(argv, &k) < 0)
		goto out;
	put_entry(&w, &k, deps, dlen, plan, len); /* counts */
	n = w.n;
	if (n > PC_MAX || !(w.p = malloc(n)) || (dir = pc_cache_dir(e, 1)) < 0)
		goto out;
	w.n = 0;
	put_entry(&w, &k, deps, dlen, plan, len);
	char name[17];
	pc_name(&k, name);
	if ((r = write_entry(dir, name, w.p, n)) == 0)
		prune(dir);
out:
	if (dir >= 0)
		close(dir);
	/* The entry holds the key (the caller's HOME and paths) and the
	 * plan: zeroed, as the init stage is a fork of this process. */
	if (w.p)
		explicit_bzero(w.p, n);
	free(w.p);
	pc_key_free(&k);
	return r;
}

void plancache_store(char **argv, const unsigned char *plan, size_t len, const char *deps, size_t dlen)
{
	int saved = errno;
	struct pc_env e;
	pc_env_self(&e);
	pc_store(&e, argv, plan, len, deps, dlen);
	errno = saved;
}
