/* jail's side of the jail's network (proxyctl.c): PID 1 hands the runner
 * the sockets made in the jail's network namespace (netns.c: the
 * resolver's, and for the allowlist the proxy's listeners, /dev/net/tun
 * and what the device is made with: tun.c, tap.c); the device and the
 * helper that serves them, Go (proxy/, netstack/), are made by the runner
 * on their first use only, so a run that never looks up a name or
 * connects pays nothing for them; it reports as it goes, one line
 * of JSON fields at a time, and is stopped at the end. */
#ifndef JAIL_PROXYCTL_H
#define JAIL_PROXYCTL_H

#include <stddef.h>
#include <sys/types.h>

#include "internal/wire/err.h"
#include "jail/stage.h"

struct runner;

/* How many of the proxy's refusals jail names on stderr; the record has
 * them all. */
#define PROXY_REFUSED_SAID 5
/* The longest refusal line kept, NUL included: the proxy's are shorter
 * (a name of 253 bytes twice, a reason of 200, a profile's name of 253:
 * proxy/proxy.go's refusedLine), and say() adds "jail: " within 1200. */
#define PROXY_REFUSED_LEN 1040

struct proxy {
	int net;           /* the socket PID 1 sends the network's sockets on (stage.h's FD_NET), or -1 */
	int fd[NET_NFDS];  /* those sockets (stage.h's NET_*), until the helper takes them; -1: none */
	int nfds;          /* how many PID 1 sent (stage.h says which) */
	struct jerr err;   /* why the TUN device could not be made on first use */
	int report;      /* the proxy's report pipe, while it runs */
	pid_t pid;
	int lifeline; /* the write end of the proxy's lifeline: its EOF is the runner's end */
	char line[262144], last[262144]; /* the line being read, the last whole report */
	size_t len;
	int overlong;   /* the line being read does not fit: it is dropped */
	int incomplete; /* a report was dropped: the record's may be an older one */
	int failed;     /* the helper could not start, or ended before the jail */
	char note[1024]; /* what the proxy said that is not a report (why it failed) */
	/* The proxy's refusals, a line each as the agent reads them at the
	 * end of the run: the first PROXY_REFUSED_SAID, and how many in all. */
	char refused[PROXY_REFUSED_SAID][PROXY_REFUSED_LEN];
	unsigned nrefused;
};

/* on_proxy_listeners takes the sockets PID 1 sent; EOF: it made none
 * (it failed, and says why on the error pipe). */
void on_proxy_listeners(struct runner *r, short revents);

/* on_proxy_connect is the first use of any of the sockets (a lookup, a
 * connection, a packet): the TUN device is made, if it was not at the
 * start, and the helper starts, and takes them all. */
void on_proxy_connect(struct runner *r, short revents);

/* proxy_last_packets, at the end of the run, before proxy_stop: a packet
 * a tap took as the command ended, after the runner's last look (its
 * delivery left to a softirq), still starts the helper, which records
 * it. One look, at once: a packet later still is not waited for. */
void proxy_last_packets(struct runner *r);

/* on_proxy_report takes what the helper wrote on its report pipe; at its
 * end before the jail's, with the TUN device in the jail (which would then
 * black-hole every connection), the run ends. */
void on_proxy_report(struct runner *r, short revents);

/* proxy_read takes what the proxy wrote on fd; 0 at its end. */
int proxy_read(struct proxy *px, int fd);

/* proxy_stop asks the proxy for its last report (a byte on its
 * lifeline; 1 s), then ends it, and closes what is left of it. */
void proxy_stop(struct proxy *px);

#endif
