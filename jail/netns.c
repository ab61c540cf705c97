/* The jail's network namespace: loopback up (a server the command starts
 * on 127.0.0.1 works), and the sockets jail's side serves from the host's
 * (net_prepare, in the init stage, while the runner moves it into its
 * cgroup): the resolver's on 127.0.0.1:53 in every mode but host, and for
 * the allowlist the proxy's listeners and the TUN device (tun.c); PID 1
 * hands them to the runner (net_send), which starts jail's side on their
 * first use (proxyctl.c). C, as the whole init stage is (stage.h says
 * why). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "internal/linux/fdpass.h"
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

int net_prepare(int allowlist, int *fds, int *n, struct jerr *e)
{
	static const int types[] = {SOCK_DGRAM, SOCK_STREAM, SOCK_STREAM, SOCK_STREAM};
	static const int ports[] = {RESOLVER_PORT, RESOLVER_PORT, PROXY_HTTP_PORT, PROXY_SOCKS_PORT};
	int want = allowlist ? NET_NFDS - 1 : NET_DNS_FDS;
	*n = 0;
	if (allowlist && (fds[NET_TUN] = tun_open(e)) < 0)
		return -1;
	for (; *n < want; (*n)++)
		if ((fds[*n] = bound(types[*n], ports[*n], e)) < 0)
			goto fail;
	if (!allowlist)
		return 0;
	*n = NET_NFDS;
	if (tun_setup(fds[NET_TUN], e) == 0)
		return 0;
fail:
	if (allowlist && *n < NET_NFDS)
		close(fds[NET_TUN]);
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
