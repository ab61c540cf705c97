// The taps: what the jail sent to an address before its TUN device
// existed (jail/tap.c). Until the network's first use every address but
// loopback is the jail's own, so the kernel reset each such connection
// and answered each datagram port unreachable; the raw sockets saw them,
// and the first started this helper. Each is recorded here as the stack
// would have recorded it, so the agent reads the same line either way.

package proxy

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// The taps' fds, after fdTUN, in jail/stage.h's NET_TAP_* order; none
// when the device was made at the start, the IPv6 two only when the
// kernel has IPv6.
const (
	fdTapTCP4 = fdTUN + 1 + iota
	fdTapUDP4
	fdTapTCP6
	fdTapUDP6
)

// maxTapped bounds the packets read from each tap: its queue holds a
// few hundred (64 KiB), and a jail still sending is reset by the kernel
// all the same, only no longer recorded.
const maxTapped = 512

// errEarly is a connection refused before the stack ran whose
// destination the policy would allow: never, as an entry that names an
// address has the device made at the start, but the kernel reset it.
var errEarly = errors.New("sent before the jail's network was up")

// netFds is how many of the network's fds the runner passed, from
// fdDNSUDP, as _JAIL_NET_FDS says (jail/proxyctl.c); 0 when it does not.
func netFds() int {
	n, err := strconv.Atoi(os.Getenv("_JAIL_NET_FDS"))
	if err != nil {
		return 0
	}
	return n
}

// drainTaps records what the taps hold, and closes them: from now on the
// device carries every packet, and the stack decides. n is how many of
// the network's fds were passed: a tap's number is the runtime's own
// (its epoll's, say) when it was not.
func (p *proxy) drainTaps(n int) {
	for _, t := range []struct {
		fd   int
		v6   bool
		kind string
	}{{fdTapTCP4, false, kindTCP}, {fdTapUDP4, false, kindUDP}, {fdTapTCP6, true, kindTCP}, {fdTapUDP6, true, kindUDP}} {
		if t.fd >= fdDNSUDP+n {
			continue // not passed: no such tap
		}
		for i := 0; i < maxTapped; i++ {
			dst, ok := readTap(t.fd, t.v6)
			if !ok {
				break
			}
			p.tapped(t.kind, dst)
		}
		unix.Close(t.fd)
	}
}

// tapped records one packet the kernel refused: a connection as the
// policy words its refusal, a datagram as the stack's.
func (p *proxy) tapped(kind string, dst netip.AddrPort) {
	if kind == kindUDP {
		p.deny(kindUDP, p.named(dst.Addr().String(), dst.Port()), reasonUDP)
		return
	}
	t, _, err := p.permit(dst.Addr().String(), dst.Port())
	if err == nil {
		err = errEarly
	}
	p.deny(kindTCP, t, err.Error())
}

// readTap reads a packet from a tap, without waiting: false when none is
// left (or it cannot be read). An IPv4 raw socket reads the IP header;
// an IPv6 one the transport header, the destination in IPV6_PKTINFO.
// Either way the destination port is the transport header's third and
// fourth bytes, for TCP as for UDP.
func readTap(fd int, v6 bool) (netip.AddrPort, bool) {
	var buf [128]byte
	var oob [64]byte
	for {
		n, oobn, _, _, err := unix.Recvmsg(fd, buf[:], oob[:], unix.MSG_DONTWAIT)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return netip.AddrPort{}, false
		}
		if dst, ok := tapDest(buf[:n], oob[:oobn], v6); ok {
			return dst, true
		}
		// A packet too short to name its destination: the next.
	}
}

// tapDest is the destination of a packet a tap read, with its control
// messages.
func tapDest(b, oob []byte, v6 bool) (netip.AddrPort, bool) {
	if !v6 {
		if len(b) < 20 || b[0]>>4 != 4 {
			return netip.AddrPort{}, false
		}
		ihl := int(b[0]&0xf) * 4
		if ihl < 20 || len(b) < ihl+4 {
			return netip.AddrPort{}, false
		}
		addr := netip.AddrFrom4([4]byte(b[16:20]))
		return netip.AddrPortFrom(addr, binary.BigEndian.Uint16(b[ihl+2:])), true
	}
	if len(b) < 4 {
		return netip.AddrPort{}, false
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return netip.AddrPort{}, false
	}
	for _, m := range msgs {
		if m.Header.Level == unix.IPPROTO_IPV6 && m.Header.Type == unix.IPV6_PKTINFO && len(m.Data) >= 16 {
			addr := netip.AddrFrom16([16]byte(m.Data[:16]))
			return netip.AddrPortFrom(addr, binary.BigEndian.Uint16(b[2:])), true
		}
	}
	return netip.AddrPort{}, false
}
