/* The jail's network namespace: loopback up (a server the command starts
 * on 127.0.0.1 works), and the sockets jail's side serves from the host's
 * (net_prepare, in the init stage, while the runner moves it into its
 * cgroup): the resolver's on 127.0.0.1:53 in every mode but host, and for
 * the allowlist the proxy's listeners, /dev/net/tun and what the device
 * is made with on first use (tun.c, tap.c); PID 1 hands them to the
 * runner (net_send), which starts jail's side on their first use
 * (proxyctl.c). C, as the whole init stage is (stage.h says why). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "internal/linux/fdpass.h"
#include "jail/rtnl.h"
#include "jail/stage.h"

int loopback_up(struct jerr *e)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return jerr_set(e, errno, "loopback: socket");
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	int r = ioctl(s, SIOCGIFFLAGS, &ifr);
	if (r == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		r = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	int err = errno;
	close(s);
	return r < 0 ? jerr_set(e, err, "bring up loopback") : 0;
}

/* bound makes a socket of type on 127.0.0.1:port, listening when it is a
 * stream: binding 53 needs CAP_NET_BIND_SERVICE in the jail's user
 * namespace, which the init stage, its creator, has. */
static int bound(int type, int port, struct jerr *e)
{
	int s = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	if (s < 0)
		return jerr_set(e, errno, "network: socket");
	int one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0 ||
	    (type == SOCK_STREAM && listen(s, 128) < 0)) {
		int err = errno;
		close(s);
		return jerr_set(e, err, "network: listen on 127.0.0.1:%d in the jail", port);
	}
	return s;
}

/* ipv6_on reports whether the kernel has IPv6 (not booted with
 * ipv6.disable=1): then the jail's network is configured for it too. */
static int ipv6_on(void)
{
	int s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 0;
	close(s);
	return 1;
}

int net_prepare(uint32_t flags, int *fds, int *n, struct jerr *e)
{
	static const int types[] = {SOCK_DGRAM, SOCK_STREAM, SOCK_STREAM, SOCK_STREAM};
	static const int ports[] = {RESOLVER_PORT, RESOLVER_PORT, PROXY_HTTP_PORT, PROXY_SOCKS_PORT};
	int allowlist = (flags & PROC_ALLOWLIST) != 0;
	*n = 0;
	for (; *n < (allowlist ? NET_TUN : NET_DNS_FDS); (*n)++)
		if ((fds[*n] = bound(types[*n], ports[*n], e)) < 0)
			goto fail;
	if (!allowlist)
		return 0;
	if ((fds[NET_TUN] = tun_open(e)) < 0)
		goto fail;
	(*n)++;
	if ((fds[NET_RTNL] = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE)) < 0) {
		jerr_set(e, errno, "allowlist network: netlink socket");
		goto fail;
	}
	(*n)++;
	int v6 = ipv6_on();
	if (tun_addrs(fds[NET_RTNL], &v6, e) < 0)
		goto fail;
	if (flags & PROC_TUN_EAGER) {
		int r = tun_make(fds[NET_TUN], fds[NET_RTNL], v6, 0, e);
		close(fds[NET_RTNL]);
		*n = NET_EAGER_FDS;
		if (r == 0)
			return 0;
		goto fail;
	}
	int taps;
	if (taps_open(fds[NET_RTNL], v6, fds + NET_TAP_TCP4, &taps, e) < 0)
		goto fail;
	*n += taps;
	return 0;
fail:
	net_close_all(fds, *n);
	*n = 0;
	return -1;
}

void net_close_all(const int *fds, int n)
{
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

int net_send(int sock, const int *fds, int n, struct jerr *e)
{
	int r = fd_send(sock, fds, n);
	if (r < 0)
		jerr_set(e, errno, "network: hand the jail's sockets to jail");
	return r;
}
