/* Closing every fd jail itself inherited, so that none reaches the command
 * (invariant 6), even where close_range is missing or filtered. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jail/stage.h"

static int close_range_ok(unsigned lo, unsigned hi)
{
	return lo > hi || syscall(SYS_close_range, lo, hi, 0) == 0;
}

static int kept(int fd, int keep1, int keep2) { return fd == keep1 || fd == keep2; }

/* close_by_walk closes what /proc/self/fd lists, when /proc is there. */
static int close_by_walk(int lo, int keep1, int keep2)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	int self = dirfd(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name || fd < lo || kept((int)fd, keep1, keep2) || fd == self)
			continue;
		close((int)fd);
	}
	closedir(d);
	return 0;
}

int close_fds_from(int lo, int keep1, int keep2)
{
	/* The ranges between lo and the kept fds (keep1 < keep2, or -1). */
	int ok = 1, from = lo;
	int keeps[2] = {keep1, keep2};
	for (int i = 0; i < 2 && ok; i++) {
		if (keeps[i] < from)
			continue;
		ok = close_range_ok((unsigned)from, (unsigned)keeps[i] - 1);
		from = keeps[i] + 1;
	}
	if (ok && close_range_ok((unsigned)from, ~0u))
		return 0;
	if (close_by_walk(lo, keep1, keep2) == 0)
		return 0;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_max > (1u << 20))
		return -1;
	for (int fd = lo; fd < (int)rl.rlim_max; fd++)
		if (!kept(fd, keep1, keep2))
			close(fd);
	return 0;
}
