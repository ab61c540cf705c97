// The transparent path: the policy and relay behind the user-space stack on
// the jail's TUN device (netstack.Handler), for programs that know nothing
// of proxies.

package proxy

import (
	"bufio"
	"errors"
	"net"
	"net/netip"

	"github.com/jail-sandbox/jail/netstack"
)

// transparent is the proxy as the stack's netstack.Handler.
type transparent struct{ p *proxy }

// upstream is a connection Dial opened, with the destination as the
// record and Serve's checks name it.
type upstream struct {
	net.Conn
	t target
}

func (u *upstream) CloseWrite() error {
	if cw, ok := u.Conn.(closeWriter); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Abort makes u's close a reset (abort closes it).
func (u *upstream) Abort() {
	if tc, ok := u.Conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
}

// Dial decides on a connection the jail opens to dst, before its
// handshake completes, and connects on the host: dst is a fake address
// the resolver gave (its name is the destination) or an address the jail
// had no name for. An error resets the jail's connection; a refusal is
// recorded.
func (h *transparent) Dial(dst netip.AddrPort) (net.Conn, error) {
	c, t, err := h.p.dial(dst.Addr().String(), dst.Port())
	if err != nil {
		return nil, err
	}
	return &upstream{c, t}, nil
}

// Serve relays an accepted connection as serveConn does, to the
// destination Dial named.
func (h *transparent) Serve(dst netip.AddrPort, client, server net.Conn) {
	t := h.p.named(dst.Addr().String(), dst.Port())
	if u, ok := server.(*upstream); ok {
		t = u.t
	}
	h.p.serveConn(t, client, server, bufio.NewReader(client))
}

// reasonUDP is a datagram's refusal, the stack's and the taps'.
const reasonUDP = "only TCP leaves the jail"

// RefusedUDP records a datagram the stack refused (port unreachable): only
// TCP leaves the jail.
func (h *transparent) RefusedUDP(dst netip.AddrPort) {
	h.p.deny(kindUDP, h.p.named(dst.Addr().String(), dst.Port()), reasonUDP)
}

// Overloaded records a connection refused because the jail already had as
// many open as the stack allows.
func (h *transparent) Overloaded(dst netip.AddrPort) {
	h.p.deny(kindTCP, h.p.named(dst.Addr().String(), dst.Port()), "too many connections")
}

// serveTUN starts the user-space TCP/IP stack on the TUN device at fd,
// with h deciding on and relaying each connection, and returns once it
// runs (Main then waits for SIGTERM), or why it could not start. Should
// the stack stop reading the device, the helper ends, and the runner ends
// the run: the jail's connections would hang otherwise.
func serveTUN(fd int, h *transparent, die func(error)) error {
	q := &udpQueue{transparent: h, q: make(chan netip.AddrPort, 64)}
	s, err := netstack.Start(fd, netstack.DefaultOptions(), q)
	if err != nil {
		return err
	}
	go func() {
		for dst := range q.q {
			h.RefusedUDP(dst)
		}
	}()
	go func() {
		<-s.Done()
		h.p.report()
		die(errors.New("network stack: the TUN device stopped"))
	}()
	return nil
}

// udpQueue hands the stack's refused datagrams to a goroutine of their
// own: the stack calls RefusedUDP on its packet path, which must not wait
// on the record's lock or the report pipe. Past the queue's room a
// datagram goes unrecorded (a jail flooding UDP is recorded already).
type udpQueue struct {
	*transparent
	q chan netip.AddrPort
}

func (u *udpQueue) RefusedUDP(dst netip.AddrPort) {
	select {
	case u.q <- dst:
	default:
	}
}

var _ netstack.Handler = (*udpQueue)(nil)
