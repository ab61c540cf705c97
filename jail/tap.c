/* The allowlist's network before its TUN device exists (tun.c makes it on
 * the network's first use): a lookup or a proxy's connection is a first
 * use the runner sees on those sockets, but a program may also connect to
 * an IP address with no lookup first, which the policy refuses and must
 * record, with a line the agent reads. So until the device is made every
 * address but loopback is the jail's own, on lo (RTN_LOCAL routes): the
 * kernel resets such a connection at once, and answers a datagram port
 * unreachable, as jail's stack would; and raw sockets, the taps, see each
 * of those packets. The first wakes the runner, which makes the device
 * (the catch-all routes go) and starts the helper, which records what the
 * taps saw (proxy/taps.go). A tap costs a filter run on each loopback
 * packet until then; the device's registration costs far more, and every
 * run would pay it. What the catch-all changes for the command, until the
 * first use: a server of its own on every address answers at any address,
 * as it would at 127.0.0.1 (and its connection's first packet is said
 * refused all the same: the tap cannot tell), and a socket binds to any
 * address. Nothing leaves. C, as the init stage is (stage.h says why). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "jail/rtnl.h"
#include "jail/stage.h"

/* The classic BPF filters: a tap keeps only packets to an address other
 * than loopback and the jail's own (a server of the command's, reached
 * there, is no use of the network), and of TCP only a connection's first
 * (SYN, no ACK): the kernel's resets are not destinations. An IPv4 raw
 * socket reads from the IP header; an IPv6 one from the transport
 * header, its IP header at SKF_NET_OFF. */
#define DROP BPF_STMT(BPF_RET | BPF_K, 0)
#define KEEP BPF_STMT(BPF_RET | BPF_K, 0xffff)
#define JAIL_V4 0xc0000002u /* 192.0.0.2, tun.c's jail_v4 */

static const struct sock_filter tcp4[] = {
	/* 127.0.0.0/8 or the jail's own: drop */
	BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 16),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 127, 6, 0),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, JAIL_V4, 4, 0),
	/* X = the IP header's length; the TCP flags at X + 13 */
	BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0),
	BPF_STMT(BPF_LD | BPF_B | BPF_IND, 13),
	BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x12),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x02, 1, 0),
	DROP,
	KEEP,
};

static const struct sock_filter udp4[] = {
	BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 16),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 127, 2, 0),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, JAIL_V4, 0, 1),
	DROP,
	KEEP,
};

/* The destination's four words are ::1's (0, 0, 0, 1) or the jail's own
 * (fd6a:696c::2, tun.c's jail_v6: 0xfd6a696c, 0, 0, 2): jump over the
 * skip instructions that follow to a DROP; else go on to them. X holds
 * the last word either would have. */
#define NOT_OWN6(skip)                                                     \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_NET_OFF + 24),               \
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0),                   \
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xfd6a696cu, 0, 9),         \
	    BPF_STMT(BPF_LDX | BPF_IMM, 2),                                 \
	    BPF_STMT(BPF_JMP | BPF_JA, 1),                                  \
	    BPF_STMT(BPF_LDX | BPF_IMM, 1),                                 \
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_NET_OFF + 28),           \
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 4),                   \
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_NET_OFF + 32),           \
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2),                   \
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_NET_OFF + 36),           \
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, (skip), 0)

static const struct sock_filter tcp6[] = {
	NOT_OWN6(3),
	/* the TCP flags, at 13 */
	BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 13),
	BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x12),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x02, 1, 0),
	DROP,
	KEEP,
};

static const struct sock_filter udp6[] = {NOT_OWN6(1), KEEP, DROP};

/* A tap's queue: enough for the packets of a burst before the runner
 * wakes; the rest are dropped, never held. */
#define TAP_RCVBUF 65536

static int tap(int family, int proto, const struct sock_filter *f, size_t n, struct jerr *e)
{
	int s = socket(family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	if (s < 0)
		return jerr_set(e, errno, "allowlist network: a raw socket for the catch-all");
	struct sock_fprog prog = {.len = (unsigned short)n, .filter = (struct sock_filter *)f};
	int one = 1, size = TAP_RCVBUF;
	if (setsockopt(s, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) < 0 ||
	    setsockopt(s, SOL_SOCKET, SO_RCVBUF, &size, sizeof size) < 0 ||
	    (family == AF_INET6 && setsockopt(s, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one) < 0)) {
		int err = errno;
		close(s);
		return jerr_set(e, err, "allowlist network: the catch-all's filter");
	}
	return s;
}

int taps_open(int rtnl, int v6, int *taps, int *n, struct jerr *e)
{
	struct nl nl = {.s = rtnl};
	*n = 0;
	for (int i = 0; i < 1 + v6; i++) {
		int family = i ? AF_INET6 : AF_INET;
		/* The jail's own address as the source, not the destination
		 * (the kernel's choice for a local route): a connection or a
		 * connected socket to an address keeps working once the
		 * device's route replaces this one, where a source that is no
		 * longer the jail's would leave it with no route back. */
		if (nl_catchall(&nl, 1, family, i ? jail_v6 : jail_v4) < 0) {
			jerr_set(e, errno, "allowlist network: the IPv%d catch-all route", i ? 6 : 4);
			goto fail;
		}
		if ((taps[*n] = i ? tap(family, IPPROTO_TCP, tcp6, sizeof tcp6 / sizeof tcp6[0], e)
				  : tap(family, IPPROTO_TCP, tcp4, sizeof tcp4 / sizeof tcp4[0], e)) < 0)
			goto fail;
		(*n)++;
		if ((taps[*n] = i ? tap(family, IPPROTO_UDP, udp6, sizeof udp6 / sizeof udp6[0], e)
				  : tap(family, IPPROTO_UDP, udp4, sizeof udp4 / sizeof udp4[0], e)) < 0)
			goto fail;
		(*n)++;
	}
	return 0;
fail:
	net_close_all(taps, *n);
	*n = 0;
	return -1;
}
