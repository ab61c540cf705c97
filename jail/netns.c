/* The jail's network namespace: new and empty but for loopback, which PID 1
 * brings up so that a server the command starts on 127.0.0.1 works (the
 * allowlist proxy's listeners there: proxyctl.c). C, as the whole init
 * stage is (stage.h says why). */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

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
