/* The plan cache's lookup, run from the jail binary's constructor before
 * the Go runtime starts: an entry (entry.h) is used only if it is the
 * caller's own, private, for exactly this invocation, and every file it was
 * planned from is as it was then (a directory: the same one, with the same
 * mode and owner). Anything else is a miss, and Go plans. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plancache/entry.h"
#include "plancache/plancache.h"

void pc_dep_read(struct wire *w, struct pc_dep *d)
{
	/* In the order they are on the wire: an initializer's side effects
	 * have none in C. */
	*d = (struct pc_dep){0};
	d->path = wire_str(w);
	d->present = wire_u32(w);
	if (d->present > 1)
		w->bad = 1;
	if (!d->present || w->bad)
		return;
	d->dev = wire_u64(w), d->ino = wire_u64(w);
	d->mode = wire_u32(w), d->uid = wire_u32(w), d->gid = wire_u32(w);
	d->size = wire_u64(w), d->mtime = wire_u64(w), d->ctime = wire_u64(w);
}

/* dep_holds checks one file the plan came from against what it was. */
static int dep_holds(struct wire *w)
{
	struct pc_dep d;
	struct stat st;
	pc_dep_read(w, &d);
	if (w->bad)
		return 0;
	if (!d.present)
		return lstat(d.path, &st) < 0 && (errno == ENOENT || errno == ENOTDIR);
	if (lstat(d.path, &st) < 0 || st.st_dev != d.dev || st.st_ino != d.ino || st.st_mode != d.mode ||
	    st.st_uid != d.uid || st.st_gid != d.gid)
		return 0;
	/* A directory's size and times change with every entry made or
	 * removed in it: a file the agent writes at the top of its
	 * workspace, another session, anything new in $HOME or /tmp. A plan
	 * reads no directory's listing, only the names it looks up there,
	 * each a dep of its own, present or absent; so for a directory the
	 * same inode, type, mode and owner are the dep. A file's or a
	 * link's size and times say its contents are the same. */
	return S_ISDIR(st.st_mode) || ((uint64_t)st.st_size == d.size && pc_ns(st.st_mtim) == d.mtime &&
				       pc_ns(st.st_ctim) == d.ctime);
}

/* read_entry reads the entry name in dir, if it is a private regular file
 * of the caller's, of a size an entry may have; *fd stays open on it. */
static unsigned char *read_entry(int dir, const char *name, size_t *size, int *fd)
{
	/* O_NONBLOCK: a FIFO under an entry's name would block the open
	 * until a writer came; it is refused below, as anything not a
	 * regular file is. */
	*fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	unsigned char *buf = NULL;
	if (*fd < 0 || fstat(*fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) ||
	    st.st_size <= 0 || (size_t)st.st_size > PC_MAX || !(buf = malloc((size_t)st.st_size)))
		return NULL;
	if (read(*fd, buf, (size_t)st.st_size) != st.st_size) {
		explicit_bzero(buf, (size_t)st.st_size);
		free(buf);
		return NULL;
	}
	*size = (size_t)st.st_size;
	return buf;
}

unsigned char *pc_load(const struct pc_env *e, char **argv, const char **plan, size_t *len)
{
	struct pc_key k = {0};
	unsigned char *buf = NULL;
	size_t size = 0, klen;
	int dir = -1, fd = -1;
	char name[17];
	if (pc_make_key(argv, &k) < 0 || (dir = pc_cache_dir(e, 0)) < 0)
		goto miss;
	pc_name(&k, name);
	if (!(buf = read_entry(dir, name, &size, &fd)))
		goto miss;
	struct wire w = {.p = buf, .end = buf + size};
	if (wire_u32(&w) != PC_MAGIC || wire_u32(&w) != PC_VERSION)
		goto miss;
	const char *key = wire_bytes(&w, &klen);
	if (w.bad || klen != k.len || memcmp(key, k.p, klen) != 0)
		goto miss;
	for (uint32_t n = wire_u32(&w); n > 0; n--)
		if (w.bad || !dep_holds(&w))
			goto miss;
	*plan = wire_bytes(&w, len);
	if (w.bad)
		goto miss;
	futimens(fd, NULL); /* used: the last to be pruned */
	close(fd);
	close(dir);
	pc_key_free(&k);
	return buf;
miss:
	if (fd >= 0)
		close(fd);
	if (dir >= 0)
		close(dir);
	if (buf)
		explicit_bzero(buf, size);
	free(buf);
	pc_key_free(&k);
	return NULL;
}

unsigned char *plancache_load(char **argv, const unsigned char **plan, size_t *len)
{
	const char *p = NULL;
	struct pc_env e;
	pc_env_self(&e);
	unsigned char *buf = pc_load(&e, argv, &p, len);
	*plan = (const unsigned char *)p;
	return buf;
}
