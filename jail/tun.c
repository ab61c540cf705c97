/* The allowlist's way out of the jail: a TUN device in the jail's network
 * namespace, with the jail's addresses and default routes through it, whose
 * fd goes to jail's side, where a user-space TCP/IP stack (netstack/)
 * terminates every connection under the allowlist. The init stage opens
 * /dev/net/tun (tun_open: a TUN belongs to the namespace it is opened in,
 * and only there is the host's /dev still visible and, for root, its ids
 * still the host's) in netns.c's net_prepare. The device is made and
 * configured by netlink (tun_make) on the network's first use, by the
 * runner (proxyctl.c), so a run that never uses the network pays nothing
 * for it: a device's registration and its removal with the namespace
 * cost more than the rest of the allowlist's setup. Only when an entry
 * names an IP address, which a program may connect to with no lookup
 * first, does the init stage make it at the start. C, as the init stage
 * and the runner are (stage.h says why). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "jail/rtnl.h"
#include "jail/stage.h"

int tun_open(struct jerr *e)
{
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno == ENOENT || errno == ENODEV || errno == ENXIO)
		return jerr_set(e, errno,
				"network = \"allowlist\" needs a TUN device, and /dev/net/tun is missing "
				"(load the tun module: modprobe tun; in a container, pass --device /dev/net/tun)");
	if (errno == EACCES || errno == EPERM)
		return jerr_set(e, errno,
				"network = \"allowlist\" needs a TUN device, and /dev/net/tun is not open to this user "
				"(make it mode 0666, as udev does on Debian and Ubuntu: chmod 0666 /dev/net/tun; or run jail as root)");
	return jerr_set(e, errno, "open /dev/net/tun for the allowlist network");
}

/* The jail's addresses, in ranges the policy counts as internal, so they
 * can never be a real destination: RFC 7335's 192.0.0.2 and a ULA. The
 * fake addresses the resolver hands out (proxy/names.go) are elsewhere.
 * They are on lo, from the start (tun_addrs), the device's routes name
 * them as the source: glibc's getaddrinfo with AI_ADDRCONFIG (getent
 * ahosts, the default with no hints) asks for no IPv4 or IPv6 address at
 * all until the host has one of its own that is not loopback, so before
 * the device is made a lookup would fail with no query, and no first
 * use would make it. */
const unsigned char jail_v4[4] = {192, 0, 0, 2};
const unsigned char jail_v6[16] = {0xfd, 0x6a, 0x69, 0x6c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

int tun_addrs(int rtnl, int *v6, struct jerr *e)
{
	struct nl nl = {.s = rtnl};
	for (int i = 0; i < 1 + *v6; i++) {
		if (nl_addr_add(&nl, LOOPBACK_IFINDEX, i ? AF_INET6 : AF_INET, i ? jail_v6 : jail_v4) == 0)
			continue;
		/* IPv6 off for the namespace's devices (disable_ipv6, as
		 * ipv6.disable_ipv6=1 boots them): the jail has none. */
		if (i && errno == EACCES) {
			*v6 = 0;
			return 0;
		}
		return jerr_set(e, errno, "allowlist network: add the jail's IPv%d address", i ? 6 : 4);
	}
	return 0;
}

int tun_make(int tun, int rtnl, int v6, int tapped, struct jerr *e)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, TUN_NAME);
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI | IFF_VNET_HDR;
	if (ioctl(tun, TUNSETIFF, &ifr) < 0)
		return jerr_set(e, errno, "allowlist network: create the TUN device");
	/* Persistent: the last close of a device that is not unregisters it
	 * there and then, tens of milliseconds on the runner's way out; this
	 * one goes with the namespace, in the kernel's own time. */
	if (ioctl(tun, TUNSETPERSIST, 1) < 0)
		return jerr_set(e, errno, "allowlist network: make the TUN device persistent");
	/* Any socket of the namespace answers for its devices. */
	if (ioctl(rtnl, SIOCGIFINDEX, &ifr) < 0)
		return jerr_set(e, errno, "allowlist network: find the TUN device");
	int ifindex = ifr.ifr_ifindex;
	struct nl nl = {.s = rtnl};
	/* The MTU and IPv6's address generation, then, in a message of its
	 * own, up: in one message the kernel still makes a link-local
	 * address at up and sends a packet from it, which would start jail's
	 * side on every run. */
	if (nl_link_mtu(&nl, ifindex, TUN_MTU, v6) < 0)
		return jerr_set(e, errno, "allowlist network: set the TUN device's MTU");
	if (nl_link_up(&nl, ifindex) < 0)
		return jerr_set(e, errno, "allowlist network: bring the TUN device up");
	for (int i = 0; i < 1 + v6; i++) {
		int family = i ? AF_INET6 : AF_INET;
		const unsigned char *a = i ? jail_v6 : jail_v4;
		if (nl_route(&nl, 1, family, RT_TABLE_MAIN, RTN_UNICAST, ifindex, a) < 0)
			return jerr_set(e, errno, "allowlist network: the IPv%d default route", i ? 6 : 4);
		/* The device's route is there first: no moment without one.
		 * A reset the kernel owes a SYN that came just before the
		 * catch-all went has no route back from what is no longer a
		 * local address: that connection's SYN is sent again after
		 * its first timeout (1 s), through the device. */
		if (tapped && nl_catchall(&nl, 0, family, NULL) < 0)
			return jerr_set(e, errno, "allowlist network: remove the IPv%d catch-all route", i ? 6 : 4);
	}
	return 0;
}
