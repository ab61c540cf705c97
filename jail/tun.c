/* The allowlist's way out of the jail: a TUN device in the jail's network
 * namespace, with the jail's addresses and default routes through it, whose
 * fd goes to jail's side, where a user-space TCP/IP stack (netstack/)
 * terminates every connection under the allowlist. The init stage opens
 * /dev/net/tun (tun_open: a TUN belongs to the namespace it is opened in,
 * and only there is the host's /dev still visible and, for root, its ids
 * still the host's), makes the device and configures it by netlink
 * (tun_setup), all in netns.c's net_prepare; PID 1 hands it over. C, as
 * the whole init stage is (stage.h says why). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/if_tun.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

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

/* A netlink request: the header, the message, and room for attributes. */
struct nlreq {
	struct nlmsghdr h;
	union {
		struct ifinfomsg link;
		struct ifaddrmsg addr;
		struct rtmsg route;
	} m;
	char attrs[256];
};

/* nl_put appends attribute type with n bytes of data at the request's end;
 * a nest is opened with data NULL and closed by nl_end. */
static struct rtattr *nl_put(struct nlreq *q, unsigned short type, const void *data, size_t n)
{
	struct rtattr *a = (struct rtattr *)((char *)q + NLMSG_ALIGN(q->h.nlmsg_len));
	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(n);
	if (data)
		memcpy(RTA_DATA(a), data, n);
	q->h.nlmsg_len = NLMSG_ALIGN(q->h.nlmsg_len) + RTA_ALIGN(a->rta_len);
	return a;
}

static void nl_end(struct nlreq *q, struct rtattr *nest)
{
	nest->rta_len = (unsigned short)((char *)q + q->h.nlmsg_len - (char *)nest);
}

static void nl_start(struct nlreq *q, unsigned short type, unsigned short flags, size_t msg)
{
	memset(q, 0, sizeof *q);
	q->h.nlmsg_len = (unsigned)NLMSG_LENGTH(msg);
	q->h.nlmsg_type = type;
	q->h.nlmsg_flags = (unsigned short)(NLM_F_REQUEST | NLM_F_ACK | flags);
}

/* A netlink socket, and the sequence number of its last request. */
struct nl {
	int s;
	unsigned seq;
};

/* nl_do sends a request and reads its acknowledgement: 0, or -1 with the
 * kernel's errno. */
static int nl_do(struct nl *nl, struct nlreq *q)
{
	int s = nl->s;
	q->h.nlmsg_seq = ++nl->seq;
	if (send(s, q, q->h.nlmsg_len, 0) < 0)
		return -1;
	char buf[1024];
	for (;;) {
		ssize_t n = recv(s, buf, sizeof buf, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != q->h.nlmsg_seq || h->nlmsg_type != NLMSG_ERROR)
				continue;
			int err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			if (err == 0)
				return 0;
			errno = -err;
			return -1;
		}
	}
}

/* The jail's addresses, in ranges the policy counts as internal, so they
 * can never be a real destination: RFC 7335's 192.0.0.2 and a ULA. The
 * fake addresses the resolver hands out (proxy/names.go) are elsewhere. */
static const unsigned char jail_v4[4] = {192, 0, 0, 2};
static const unsigned char jail_v6[16] = {0xfd, 0x6a, 0x69, 0x6c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

static int addr_add(struct nl *s, int ifindex, int family, const unsigned char *a, struct jerr *e)
{
	struct nlreq q;
	size_t n = family == AF_INET ? 4 : 16;
	nl_start(&q, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, sizeof(struct ifaddrmsg));
	q.m.addr = (struct ifaddrmsg){.ifa_family = (unsigned char)family,
				      .ifa_prefixlen = (unsigned char)(n * 8),
				      .ifa_flags = family == AF_INET6 ? IFA_F_NODAD : 0,
				      .ifa_scope = RT_SCOPE_UNIVERSE,
				      .ifa_index = (unsigned)ifindex};
	nl_put(&q, IFA_LOCAL, a, n);
	nl_put(&q, IFA_ADDRESS, a, n);
	if (nl_do(s, &q) < 0)
		return jerr_set(e, errno, "allowlist network: add the jail's IPv%d address", family == AF_INET ? 4 : 6);
	return 0;
}

static int route_add(struct nl *s, int ifindex, int family, const unsigned char *src, struct jerr *e)
{
	struct nlreq q;
	nl_start(&q, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, sizeof(struct rtmsg));
	q.m.route = (struct rtmsg){.rtm_family = (unsigned char)family,
				   .rtm_table = RT_TABLE_MAIN,
				   .rtm_protocol = RTPROT_STATIC,
				   .rtm_scope = RT_SCOPE_LINK,
				   .rtm_type = RTN_UNICAST};
	uint32_t oif = (uint32_t)ifindex;
	nl_put(&q, RTA_OIF, &oif, sizeof oif);
	nl_put(&q, RTA_PREFSRC, src, family == AF_INET ? 4 : 16);
	if (nl_do(s, &q) < 0)
		return jerr_set(e, errno, "allowlist network: the IPv%d default route", family == AF_INET ? 4 : 6);
	return 0;
}

/* link_config sets the MTU and, with IPv6, turns its address generation
 * off; then, in a message of its own, brings the link up. In one message
 * the kernel still makes a link-local address at up and sends a packet
 * from it, which would start jail's side on every run. */
static int link_config(struct nl *s, int ifindex, int v6, struct jerr *e)
{
	struct nlreq q;
	nl_start(&q, RTM_NEWLINK, 0, sizeof(struct ifinfomsg));
	q.m.link = (struct ifinfomsg){.ifi_family = AF_UNSPEC, .ifi_index = ifindex};
	uint32_t mtu = TUN_MTU;
	nl_put(&q, IFLA_MTU, &mtu, sizeof mtu);
	if (v6) {
		struct rtattr *spec = nl_put(&q, IFLA_AF_SPEC, NULL, 0);
		struct rtattr *inet6 = nl_put(&q, AF_INET6, NULL, 0);
		unsigned char mode = IN6_ADDR_GEN_MODE_NONE;
		nl_put(&q, IFLA_INET6_ADDR_GEN_MODE, &mode, 1);
		nl_end(&q, inet6);
		nl_end(&q, spec);
	}
	if (nl_do(s, &q) < 0)
		return jerr_set(e, errno, "allowlist network: set the TUN device's MTU");
	nl_start(&q, RTM_NEWLINK, 0, sizeof(struct ifinfomsg));
	q.m.link = (struct ifinfomsg){.ifi_family = AF_UNSPEC, .ifi_index = ifindex, .ifi_flags = IFF_UP, .ifi_change = IFF_UP};
	if (nl_do(s, &q) < 0)
		return jerr_set(e, errno, "allowlist network: bring the TUN device up");
	return 0;
}

/* ipv6_on reports whether the kernel has IPv6 (not booted with
 * ipv6.disable=1): then the jail gets an IPv6 address and route too. */
static int ipv6_on(void)
{
	int s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 0;
	close(s);
	return 1;
}

int tun_setup(int fd, struct jerr *e)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, TUN_NAME);
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI | IFF_VNET_HDR;
	if (ioctl(fd, TUNSETIFF, &ifr) < 0)
		return jerr_set(e, errno, "allowlist network: create the TUN device");
	/* Persistent: the last close of a device that is not unregisters it
	 * there and then, tens of milliseconds on the runner's way out; this
	 * one goes with the namespace, in the kernel's own time. */
	if (ioctl(fd, TUNSETPERSIST, 1) < 0)
		return jerr_set(e, errno, "allowlist network: make the TUN device persistent");
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || ioctl(s, SIOCGIFINDEX, &ifr) < 0) {
		int err = errno;
		if (s >= 0)
			close(s);
		return jerr_set(e, err, "allowlist network: find the TUN device");
	}
	close(s);
	int ifindex = ifr.ifr_ifindex;
	struct nl nl = {.s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE)};
	if (nl.s < 0)
		return jerr_set(e, errno, "allowlist network: netlink socket");
	int v6 = ipv6_on();
	int r = link_config(&nl, ifindex, v6, e);
	if (r == 0)
		r = addr_add(&nl, ifindex, AF_INET, jail_v4, e);
	if (r == 0)
		r = route_add(&nl, ifindex, AF_INET, jail_v4, e);
	if (r == 0 && v6)
		r = addr_add(&nl, ifindex, AF_INET6, jail_v6, e);
	if (r == 0 && v6)
		r = route_add(&nl, ifindex, AF_INET6, jail_v6, e);
	close(nl.s);
	return r;
}
