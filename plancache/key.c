/* The plan cache's key: what makes two invocations the same run. Built by
 * the lookup, in the constructor before the Go runtime starts, and by the
 * store, in the runner; one function, so the two cannot disagree. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "plancache/entry.h"
#include "plancache/plancache.h"

/* key_put appends n bytes; the field goes on until key_end. */
static void key_put(struct pc_key *k, const char *s, size_t n)
{
	if (k->bad)
		return;
	if (k->cap - k->len < n) {
		/* Not realloc: the key holds the caller's HOME and paths, and
		 * the init stage is a fork of this process (jail/stagestart.c);
		 * no copy is left behind unzeroed. */
		size_t cap = k->cap * 2 + n + 256;
		char *p = malloc(cap);
		if (!p) {
			k->bad = 1;
			return;
		}
		if (k->p)
			memcpy(p, k->p, k->len);
		pc_key_free(k);
		k->p = p, k->cap = cap;
	}
	memcpy(k->p + k->len, s, n);
	k->len += n;
}

/* key_end closes a field with its NUL. */
static void key_end(struct pc_key *k) { key_put(k, "", 1); }

static void key_str(struct pc_key *k, const char *s)
{
	key_put(k, s, strlen(s));
	key_end(k);
}

static void key_num(struct pc_key *k, unsigned long long v)
{
	char b[32];
	key_put(k, b, (size_t)snprintf(b, sizeof b, "%llu", v));
	key_end(k);
}

/* A key being read from the run flags: the session is the last --session
 * (the CLI's flag parser keeps the last value). */
struct key_walk {
	struct pc_key *k;
	const char *session;
};

/* add_flag puts one run flag into the key, as name=value; where the status
 * record goes is not part of the plan (a caller may name a new file for
 * every run), and -p is --profile. */
static void add_flag(void *ctx, const char *name, size_t n, const char *value)
{
	struct key_walk *kw = ctx;
	if (n == 11 && strncmp(name, "status-json", n) == 0)
		return;
	if (n == 1 && name[0] == 'p')
		name = "profile", n = 7;
	if (n == 7 && strncmp(name, "session", n) == 0)
		kw->session = value;
	key_put(kw->k, name, n);
	key_put(kw->k, "=", 1);
	key_str(kw->k, value);
}

/* caps_effective is this process's effective capability set, which a
 * root caller's plan depends on (jail/userns.go: the runner clones its
 * binds only with CAP_SYS_ADMIN); -1 if it cannot be read. */
static long long caps_effective(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {{0}};
	if (syscall(SYS_capget, &hdr, d) < 0)
		return -1;
	return (long long)((unsigned long long)d[0].effective | (unsigned long long)d[1].effective << 32);
}

/* key_clean puts a directory from the environment as Go's filepath.Clean
 * spells it (so two spellings of one directory are one key), or as it is
 * when it is not rooted; "" when unset. */
static void key_clean(struct pc_key *k, const char *dir)
{
	char clean[PC_PATH_MAX];
	key_str(k, !dir ? "" : pc_clean(dir, clean, sizeof clean) == 0 ? clean : dir);
}

int pc_make_key(char **argv, struct pc_key *k)
{
	char cwd[4096], ws[PC_PATH_MAX];
	struct stat st;
	struct key_walk kw = {.k = k};
	if (!getcwd(cwd, sizeof cwd) || stat("/proc/self/exe", &st) < 0)
		return -1;
	const char *home = getenv("HOME"), *path = getenv("JAIL_PROFILE_PATH");
	const char *xdg = getenv("XDG_RUNTIME_DIR"), *state = getenv("JAIL_STATE_DIR");
	key_str(k, "jail-plan-key-v4");
	key_num(k, geteuid());
	key_num(k, getegid());
	long long caps = caps_effective();
	if (caps < 0)
		return -1;
	key_num(k, (unsigned long long)caps);
	key_str(k, cwd);
	key_str(k, home ? home : "");
	key_str(k, path ? path : "");
	/* What decides where the cache and the state are, and so which
	 * directories a plan's writable binds were checked against (Guarded):
	 * a plan is replayed only where the same ones are guarded. */
	key_clean(k, xdg);
	key_clean(k, state);
	key_num(k, access(PC_RUN "/" PC_USER, F_OK) == 0);
	key_num(k, (unsigned long long)st.st_dev);
	key_num(k, (unsigned long long)st.st_ino);
	key_num(k, (unsigned long long)st.st_size);
	key_num(k, (unsigned long long)st.st_mtim.tv_sec * 1000000000ull + (unsigned long long)st.st_mtim.tv_nsec);
	if (plancache_args(argv, add_flag, &kw) < 0)
		return -1;
	/* A session's plan binds its workspace, which JAIL_STATE_DIR (not
	 * otherwise in the key) places: the key names it. An id or a state
	 * directory Go refuses is never cached. */
	if (kw.session) {
		if (pc_session_workspace(kw.session, ws, sizeof ws) < 0)
			return -1;
		key_put(k, "session-workspace=", 18);
		key_str(k, ws);
	}
	return k->bad ? -1 : 0;
}

/* pc_name hashes the key with FNV-1a: the entry holds the whole key, which
 * the lookup compares in full, so a collision is only a miss. */
void pc_name(const struct pc_key *k, char name[17])
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < k->len; i++)
		h = (h ^ (unsigned char)k->p[i]) * 1099511628211ull;
	snprintf(name, 17, "%016llx", (unsigned long long)h);
}

void pc_key_free(struct pc_key *k)
{
	if (k->p)
		explicit_bzero(k->p, k->cap);
	free(k->p);
	k->p = NULL;
}
