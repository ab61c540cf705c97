/* The disk limits the runner holds the jail to (diskwatch.c): the bytes
 * its processes write (limits.disk) and the free space every filesystem
 * holding a writable bind keeps (limits.disk_reserve). */
#ifndef JAIL_DISKWATCH_H
#define JAIL_DISKWATCH_H

#include <stdint.h>

#include "internal/wire/err.h"

struct run_plan;
struct runner;

/* The most filesystems watched: one per writable bind at most. */
#define DISK_MAX_FS 64

/* struct disk is the runner's watch over the disk limits. */
struct disk {
	int timer; /* every 10 ms (1 ms close to a reserve) while the jail runs; -1: nothing to watch */
	long tick_ns;
	int nfs;
	struct {
		int fd;           /* O_PATH of a writable bind's source */
		uint64_t reserve; /* the free bytes its filesystem keeps */
		uint64_t ireserve; /* ... and free inodes (0: it has no such limit) */
		const char *dst;  /* where the jail sees it, for the line */
	} fs[DISK_MAX_FS];
	uint64_t limit;     /* what the jail may write: the run's limit, or what is left of the session's; UINT64_MAX none */
	int by_session;     /* ... the session's */
	int account;        /* the session's account (session.c), or -1 */
	uint64_t session_used; /* what the session's workspace holds, as the account says */
	uint64_t committed;    /* what of written the account has */
	uint64_t step;         /* ... added each time this much more is written */
	uint64_t written;   /* bytes the jail's processes wrote, as last read */
	uint64_t pid1_written; /* PID 1's count, as it reported it (stage.h's WRITTEN_MAGIC) */
	int measured;       /* written is the whole jail's, read from PID 1 at its end */
	int hit;            /* DISK_LIMIT_HIT or DISK_RESERVE_HIT: the run was ended */
	int hit_fs;         /* ... on fs[hit_fs]'s filesystem (the reserve) */
	uint64_t hit_free;  /* ... which had this much free */
	int hit_inodes;     /* ... of inodes, not bytes */
};

#define DISK_LIMIT_HIT 1
#define DISK_RESERVE_HIT 2

/* disk_open opens each writable bind's filesystem and checks it has more
 * free than its reserve before anything runs, and, in a session with a
 * limit, reads what its workspace holds; 0, or -1 with *e saying why (and
 * the fix). */
int disk_open(struct disk *d, const struct run_plan *p, struct jerr *e);

/* disk_arm starts the 10 ms watch once the jail is started; 0, or -1 with
 * *e set. */
int disk_arm(struct disk *d, const struct run_plan *p, struct jerr *e);

/* on_disk is the watch's tick: a filesystem below its reserve, or the jail
 * past its disk limit, kills the jail. */
void on_disk(struct runner *r, short revents);

/* disk_final takes what the whole jail wrote from PID 1's rusage, once
 * the runner reaped it (it holds every process of the jail): the record's
 * figure, the limit's verdict for a run that ended between two ticks, and
 * the session's account. */
void disk_final(struct runner *r);

/* account_open reads the session's account (diskaccount.c), measuring its
 * workspace again when due, and sets the run's limit to what is left; 0,
 * or -1 with *e set. */
int account_open(struct disk *d, const struct run_plan *p, struct jerr *e);

/* account_commit adds what the run wrote since the last commit to the
 * account, and the run's limit follows what other runs added. */
void account_commit(struct disk *d, const struct run_plan *p);

/* disk_line writes the line a disk limit's kill says; "" when none. */
void disk_line(const struct run_plan *p, const struct disk *d, char *buf, size_t size);

#endif
