/* Closing every fd jail itself inherited, so that none reaches the command
 * (invariant 6), even where close_range is missing or filtered. The init
 * stage, the command's process and the proxy's child before its exec run
 * it: C, as the init stage and the runner are (stage.h, runner.c). */
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

static int kept(int fd, const int *keep, int nkeep)
{
	for (int i = 0; i < nkeep; i++)
		if (fd == keep[i])
			return 1;
	return 0;
}

/* close_by_walk closes what /proc/self/fd lists, when /proc is there. */
static int close_by_walk(int lo, const int *keep, int nkeep)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	int self = dirfd(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name || fd < lo || kept((int)fd, keep, nkeep) || fd == self)
			continue;
		close((int)fd);
	}
	closedir(d);
	return 0;
}

int close_fds_from(int lo, const int *keep, int nkeep)
{
	/* The ranges between lo and the kept fds (ascending). */
	int ok = 1, from = lo;
	for (int i = 0; i < nkeep && ok; i++) {
		if (keep[i] < from)
			continue;
		ok = close_range_ok((unsigned)from, (unsigned)keep[i] - 1);
		from = keep[i] + 1;
	}
	if (ok && close_range_ok((unsigned)from, ~0u))
		return 0;
	if (close_by_walk(lo, keep, nkeep) == 0)
		return 0;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_max > (1u << 20))
		return -1;
	for (int fd = lo; fd < (int)rl.rlim_max; fd++)
		if (!kept(fd, keep, nkeep))
			close(fd);
	return 0;
}
