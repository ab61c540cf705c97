/* The runner's clock: CLOCK_MONOTONIC, which jail/run.go's monotonic
 * reads too, so the Go side's start time and the runner's agree. */
#ifndef JAIL_MONOTONIC_H
#define JAIL_MONOTONIC_H

#include <stdint.h>
#include <time.h>

/* monotonic_ns is CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
