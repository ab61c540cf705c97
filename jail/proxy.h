/* The allowlist proxy, on the runner's side (proxy.c): its listeners live in
 * the jail's network namespace (PID 1 made them and sent them to the
 * runner); the proxy itself, Go (proxy/), is started on the first
 * connection only, so a run that makes none pays nothing for it. It
 * reports as it goes, one line of JSON fields at a time. */
#ifndef JAIL_PROXY_H
#define JAIL_PROXY_H

#include <stddef.h>
#include <sys/types.h>

#include "cgroup/cg.h"

struct proxy {
	int http, socks; /* the listeners, until the proxy takes them */
	pid_t pid;
	int lifeline; /* the write end of the proxy's lifeline: its EOF is the runner's end */
	char line[262144], last[262144]; /* the line being read, the last whole report */
	size_t len;
	int overlong;   /* the line being read does not fit: it is dropped */
	int incomplete; /* a report was dropped: the record's may be an older one */
	int failed;     /* the proxy could not start, or ended before the jail */
	char note[1024]; /* what the proxy said that is not a report (why it failed) */
};

/* proxy_start starts the proxy on the listeners, with config (JSON) on a
 * pipe, in the run's cgroup cg; it returns the report pipe's read end, or
 * -1 when it could not even fork. */
int proxy_start(struct proxy *px, const char *config, const struct cg_run *cg);

/* proxy_read takes what the proxy wrote on fd; 0 at its end. */
int proxy_read(struct proxy *px, int fd);

/* proxy_stop asks the proxy for its last report (SIGTERM, 1 s), then ends
 * it; fd is its report pipe (-1: gone already). */
void proxy_stop(struct proxy *px, int fd);

#endif
