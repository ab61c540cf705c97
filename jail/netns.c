/* The jail's network namespace: new and empty but for loopback, which is
 * brought up so that a server the command starts on 127.0.0.1 works. */
#define _GNU_SOURCE
#include <errno.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
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

/* listen_on makes a listening TCP socket on 127.0.0.1:port. */
static int listen_on(int port, struct jerr *e)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return jerr_set(e, errno, "proxy: socket");
	int one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0 ||
	    listen(s, 128) < 0) {
		int err = errno;
		close(s);
		return jerr_set(e, err, "proxy: listen on 127.0.0.1:%d in the jail", port);
	}
	return s;
}

int proxy_listeners(int sock, struct jerr *e)
{
	int fds[2];
	if ((fds[0] = listen_on(PROXY_HTTP_PORT, e)) < 0)
		return -1;
	if ((fds[1] = listen_on(PROXY_SOCKS_PORT, e)) < 0) {
		close(fds[0]);
		return -1;
	}
	int n = fd_send(sock, fds, 2) == 0 ? 1 : -1;
	int err = errno;
	close(fds[0]);
	close(fds[1]);
	return n == 1 ? 0 : jerr_set(e, err, "proxy: hand the listeners to jail");
}
