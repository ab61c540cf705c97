/* Route netlink requests (rtnl.h): a request is built in one buffer,
 * sent, and its acknowledgement read, so each change either happened or
 * says why. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "jail/rtnl.h"

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

int nl_link_mtu(struct nl *nl, int ifindex, unsigned mtu, int v6)
{
	struct nlreq q;
	nl_start(&q, RTM_NEWLINK, 0, sizeof(struct ifinfomsg));
	q.m.link = (struct ifinfomsg){.ifi_family = AF_UNSPEC, .ifi_index = ifindex};
	uint32_t m = mtu;
	nl_put(&q, IFLA_MTU, &m, sizeof m);
	if (v6) {
		struct rtattr *spec = nl_put(&q, IFLA_AF_SPEC, NULL, 0);
		struct rtattr *inet6 = nl_put(&q, AF_INET6, NULL, 0);
		unsigned char mode = IN6_ADDR_GEN_MODE_NONE;
		nl_put(&q, IFLA_INET6_ADDR_GEN_MODE, &mode, 1);
		nl_end(&q, inet6);
		nl_end(&q, spec);
	}
	return nl_do(nl, &q);
}

int nl_link_up(struct nl *nl, int ifindex)
{
	struct nlreq q;
	nl_start(&q, RTM_NEWLINK, 0, sizeof(struct ifinfomsg));
	q.m.link = (struct ifinfomsg){.ifi_family = AF_UNSPEC, .ifi_index = ifindex, .ifi_flags = IFF_UP, .ifi_change = IFF_UP};
	return nl_do(nl, &q);
}

int nl_addr_add(struct nl *nl, int ifindex, int family, const unsigned char *a)
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
	return nl_do(nl, &q);
}

int nl_route(struct nl *nl, int add, int family, unsigned char table, unsigned char type, int ifindex,
	     const unsigned char *src)
{
	struct nlreq q;
	nl_start(&q, add ? RTM_NEWROUTE : RTM_DELROUTE, add ? NLM_F_CREATE | NLM_F_EXCL : 0, sizeof(struct rtmsg));
	/* A removal matches any scope; a local route's is the host's. */
	unsigned char scope = !add ? RT_SCOPE_NOWHERE : type == RTN_LOCAL ? RT_SCOPE_HOST : RT_SCOPE_LINK;
	q.m.route = (struct rtmsg){.rtm_family = (unsigned char)family,
				   .rtm_table = table,
				   .rtm_protocol = RTPROT_STATIC,
				   .rtm_scope = scope,
				   .rtm_type = type};
	uint32_t oif = (uint32_t)ifindex;
	nl_put(&q, RTA_OIF, &oif, sizeof oif);
	if (src)
		nl_put(&q, RTA_PREFSRC, src, family == AF_INET ? 4 : 16);
	return nl_do(nl, &q);
}

int nl_catchall(struct nl *nl, int add, int family, const unsigned char *src)
{
	return nl_route(nl, add, family, RT_TABLE_LOCAL, RTN_LOCAL, LOOPBACK_IFINDEX, add ? src : NULL);
}
