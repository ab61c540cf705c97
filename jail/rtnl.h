/* Route netlink requests for the jail's network namespace (rtnl.c): what
 * tun.c configures the TUN device with and tap.c routes the catch-all
 * with. C: the init stage and the runner, which make them, run before any
 * Go runtime. */
#ifndef JAIL_RTNL_H
#define JAIL_RTNL_H

#include <linux/rtnetlink.h>
#include <stddef.h>

/* lo: the first device of every network namespace. */
#define LOOPBACK_IFINDEX 1

/* A NETLINK_ROUTE socket and the sequence number of its last request. */
struct nl {
	int s;
	unsigned seq;
};

/* nl_link_mtu sets the link's MTU and, with v6, turns its IPv6 address
 * generation off; nl_link_up brings it up. */
int nl_link_mtu(struct nl *nl, int ifindex, unsigned mtu, int v6);
int nl_link_up(struct nl *nl, int ifindex);

/* nl_addr_add gives the link the host address a (4 or 16 bytes, by
 * family), with no duplicate address detection. */
int nl_addr_add(struct nl *nl, int ifindex, int family, const unsigned char *a);

/* nl_route changes the family's default route of the given type (RTN_*)
 * in table (RT_TABLE_*) through the link: with add, made (src: the
 * preferred source address, or NULL), else removed. */
int nl_route(struct nl *nl, int add, int family, unsigned char table, unsigned char type, int ifindex,
	     const unsigned char *src);

/* nl_catchall makes (add) or removes the family's catch-all route: every
 * address local, on lo (tap.c), with src (added: the jail's own address
 * of the family) as the source of what is sent there. */
int nl_catchall(struct nl *nl, int add, int family, const unsigned char *src);

#endif
