// TCP: each connection the jail opens is decided, and dialled upstream,
// before its handshake completes; a refusal is a reset.

package netstack

import (
	"net"
	"net/netip"
	"slices"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/waiter"
)

// onSYN decides one connection. gVisor's forwarder runs it in a goroutine
// of its own for each new SYN, at most Options.MaxInFlight at once, and
// holds that slot until Complete.
func (s *Stack) onSYN(req *tcp.ForwarderRequest) {
	id := req.ID()
	dst := addrPort(id.LocalAddress, id.LocalPort)
	if !slices.Contains(s.sources, addrPort(id.RemoteAddress, 0).Addr()) {
		req.Complete(true) // spoofed: not from the jail's own address
		return
	}
	select {
	case s.sem <- struct{}{}:
		// Its errors are Start's: options check refused, so none here.
		s.sizeBuffers()
		defer func() {
			<-s.sem
			s.sizeBuffers()
		}()
	default:
		req.Complete(true)
		s.h.Overloaded(dst)
		return
	}
	if s.closing.Load() {
		req.Complete(true)
		return
	}
	// Dial first: the jail sees its connect succeed only once the
	// upstream one has, and a refusal or a failed dial is a reset, as
	// a host's own refusal would be.
	upstream, err := s.h.Dial(dst)
	if err != nil || upstream == nil {
		req.Complete(true)
		return
	}
	defer upstream.Close()
	var wq waiter.Queue
	ep, tcpErr := req.CreateEndpoint(&wq)
	if tcpErr != nil {
		// The jail gave up (a reset) or the handshake timed out.
		req.Complete(true)
		return
	}
	req.Complete(false)
	client := &conn{gonet.NewTCPConn(&wq, ep), ep}
	// Serve owns both ends; closing them again after it is harmless, and
	// makes sure the stack's endpoint goes even if Serve forgot it.
	defer client.Close()
	s.h.Serve(dst, client, upstream)
	s.linger(ep, &wq, client)
}

// linger closes the jail's side of a served connection and waits until
// its endpoint is gone (closed, reset, or in TIME-WAIT), so that the slot
// among MaxConns, and the count RoomyConns is judged by, covers every
// endpoint that may hold buffers. A closed endpoint keeps what the jail
// has not taken yet, and gVisor keeps it as long as the jail answers its
// probes with a shut window: past opts.Linger of that it is reset.
func (s *Stack) linger(ep tcpip.Endpoint, wq *waiter.Queue, client net.Conn) {
	entry, hup := waiter.NewChannelEntry(waiter.EventHUp)
	wq.EventRegister(&entry)
	defer wq.EventUnregister(&entry)
	uto := tcpip.TCPUserTimeoutOption(s.bufs.Linger)
	ep.SetSockOpt(&uto)
	client.Close()
	// gVisor says HUp as an endpoint closes, but not on every way into
	// TIME-WAIT: it is looked at again, less often as time goes on.
	poll := 10 * time.Millisecond
	for ep.Readiness(waiter.EventHUp)&waiter.EventHUp == 0 {
		select {
		case <-hup:
		case <-s.done:
			return
		case <-time.After(poll):
			poll = min(2*poll, time.Second)
		}
	}
}

// conn is a served connection as Serve gets it: gonet's, which can also
// be reset, so that a server's reset reaches the jail as one and data cut
// short does not look whole.
type conn struct {
	*gonet.TCPConn
	ep tcpip.Endpoint
}

// Abort resets the connection: what the stack still holds for the jail
// is dropped, and the jail's next read or write fails.
func (c *conn) Abort() { c.ep.Abort() }

// addrPort is the destination the jail asked for, as the Handler sees
// it. An IPv4-mapped IPv6 destination is unmapped, so policy has one
// spelling of each IPv4 address to judge.
func addrPort(a tcpip.Address, port uint16) netip.AddrPort {
	ip, _ := netip.AddrFromSlice(a.AsSlice())
	return netip.AddrPortFrom(ip.Unmap(), port)
}
