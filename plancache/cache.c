/* Looking up the plan cache (plancache.go has the format): an entry is used
 * only if it is the caller's own, private, for exactly this invocation, and
 * every file it was planned from is as it was then. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal/wire/wire.h"
#include "plancache/plancache.h"

#define CACHE_MAGIC 0x4341434au /* "JCAC" */
#define CACHE_VERSION 1u
#define CACHE_MAX (16u << 20)

/* A growing key buffer. */
struct key {
	char *p;
	size_t len, cap;
	int bad;
};

static void key_add(struct key *k, const char *s, size_t n)
{
	if (k->bad)
		return;
	if (k->len + n + 1 > k->cap) {
		size_t cap = k->cap * 2 + n + 256;
		char *p = realloc(k->p, cap);
		if (!p) {
			k->bad = 1;
			return;
		}
		k->p = p, k->cap = cap;
	}
	memcpy(k->p + k->len, s, n);
	k->p[k->len + n] = 0;
	k->len += n + 1;
}

static void key_str(struct key *k, const char *s) { key_add(k, s, strlen(s)); }

static void key_num(struct key *k, unsigned long long v)
{
	char b[32];
	key_add(k, b, (size_t)snprintf(b, sizeof b, "%llu", v));
}

/* add_flag puts one run flag into the key; where the status record goes
 * is not part of the plan (a caller may name a new file for every run). */
static void add_flag(void *ctx, const char *name, size_t n, const char *value)
{
	struct key *k = ctx;
	if (n == 11 && strncmp(name, "status-json", n) == 0)
		return;
	if (n == 1 && name[0] == 'p')
		name = "profile", n = 7;
	char head[32];
	if (n + 2 > sizeof head) {
		k->bad = 1;
		return;
	}
	memcpy(head, name, n);
	head[n] = '=';
	size_t vlen = strlen(value);
	/* name=value as one field */
	if (k->bad)
		return;
	if (k->len + n + 1 + vlen + 1 > k->cap) {
		size_t cap = k->cap * 2 + n + vlen + 256;
		char *p = realloc(k->p, cap);
		if (!p) {
			k->bad = 1;
			return;
		}
		k->p = p, k->cap = cap;
	}
	memcpy(k->p + k->len, head, n + 1);
	memcpy(k->p + k->len + n + 1, value, vlen);
	k->p[k->len + n + 1 + vlen] = 0;
	k->len += n + 1 + vlen + 1;
}

/* make_key is plancache.go's Key: the same fields in the same order. */
static int make_key(char **argv, struct key *k)
{
	char cwd[4096];
	struct stat st;
	if (!getcwd(cwd, sizeof cwd) || stat("/proc/self/exe", &st) < 0)
		return -1;
	const char *home = getenv("HOME"), *path = getenv("JAIL_PROFILE_PATH");
	key_str(k, "jail-plan-key-v2");
	key_num(k, geteuid());
	key_num(k, getegid());
	key_str(k, cwd);
	key_str(k, home ? home : "");
	key_str(k, path ? path : "");
	key_num(k, (unsigned long long)st.st_dev);
	key_num(k, (unsigned long long)st.st_ino);
	key_num(k, (unsigned long long)st.st_size);
	key_num(k, (unsigned long long)st.st_mtim.tv_sec * 1000000000ull + (unsigned long long)st.st_mtim.tv_nsec);
	if (plancache_args(argv, add_flag, k) < 0)
		return -1;
	return k->bad ? -1 : 0;
}

/* fnv64 names an entry; the entry holds the whole key, compared in full. */
static uint64_t fnv64(const char *p, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

/* private_dir opens dir only if the caller owns it and nobody else may
 * enter: what is cached there decides what a jail can reach. */
static int private_dir(int at, const char *name)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* cache_dir opens plancache.go's Dir: /run/jail/plans for root,
 * /run/user/UID/jail/plans (the user's private runtime directory) for
 * others; every step must be the caller's and closed to everyone else. */
static int cache_dir(void)
{
	int run = open("/run", O_RDONLY | O_DIRECTORY | O_CLOEXEC), base;
	if (run < 0)
		return -1;
	if (geteuid() == 0) {
		base = run;
	} else {
		int user = openat(run, "user", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(run);
		if (user < 0)
			return -1;
		char uid[16];
		snprintf(uid, sizeof uid, "%u", (unsigned)geteuid());
		base = private_dir(user, uid);
		close(user);
		if (base < 0)
			return -1;
	}
	int jail = private_dir(base, "jail");
	close(base);
	if (jail < 0)
		return -1;
	int plans = private_dir(jail, "plans");
	close(jail);
	return plans;
}

/* dep_holds checks one file the plan came from against what it was. */
static int dep_holds(struct wire *w)
{
	const char *path = wire_str(w);
	uint32_t present = wire_u32(w);
	struct stat st;
	if (!present) {
		return !w->bad && lstat(path, &st) < 0 && (errno == ENOENT || errno == ENOTDIR);
	}
	uint64_t dev = wire_u64(w), ino = wire_u64(w);
	uint32_t mode = wire_u32(w), uid = wire_u32(w), gid = wire_u32(w);
	uint64_t size = wire_u64(w), mtime = wire_u64(w), ctime = wire_u64(w);
	if (w->bad || lstat(path, &st) < 0)
		return 0;
	return st.st_dev == dev && st.st_ino == ino && st.st_mode == mode && st.st_uid == uid && st.st_gid == gid &&
	       (uint64_t)st.st_size == size &&
	       (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec == mtime &&
	       (uint64_t)st.st_ctim.tv_sec * 1000000000ull + (uint64_t)st.st_ctim.tv_nsec == ctime;
}

unsigned char *plancache_load(char **argv, size_t *len)
{
	struct key k = {0};
	unsigned char *buf = NULL;
	int dir = -1, fd = -1;
	if (make_key(argv, &k) < 0 || (dir = cache_dir()) < 0)
		goto miss;
	char name[32];
	snprintf(name, sizeof name, "%016llx", (unsigned long long)fnv64(k.p, k.len));
	/* O_NONBLOCK: a FIFO under an entry's name would block the open
	 * until a writer came; it is refused below, as anything not a
	 * regular file is. */
	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) ||
	    st.st_size <= 0 || (size_t)st.st_size > CACHE_MAX)
		goto miss;
	buf = malloc((size_t)st.st_size);
	if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size)
		goto miss;
	struct wire w = {.p = buf, .end = buf + st.st_size};
	size_t klen;
	if (wire_u32(&w) != CACHE_MAGIC || wire_u32(&w) != CACHE_VERSION)
		goto miss;
	const char *key = wire_bytes(&w, &klen);
	if (w.bad || klen != k.len || memcmp(key, k.p, klen) != 0)
		goto miss;
	for (uint32_t n = wire_u32(&w); n > 0; n--)
		if (w.bad || !dep_holds(&w))
			goto miss;
	const char *plan = wire_bytes(&w, len);
	if (w.bad)
		goto miss;
	futimens(fd, NULL); /* used: the last to be pruned */
	close(fd);
	close(dir);
	free(k.p);
	/* The plan stays where it is, in buf: the runner reads it in place. */
	return (unsigned char *)plan;
miss:
	if (fd >= 0)
		close(fd);
	if (dir >= 0)
		close(dir);
	free(buf);
	free(k.p);
	return NULL;
}
