// The stack: gVisor's TCP/IP on the jail's TUN fd, its TCP settings, and
// its shutdown.

package netstack

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv6"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/icmp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"
)

// nicID is the stack's one interface: the TUN.
const nicID tcpip.NICID = 1

// timeWait is how long a connection the stack closed first stays in
// TIME-WAIT. TIME-WAIT absorbs a late segment of an old connection; a TUN
// inside one host neither delays nor duplicates segments, and gVisor's
// 60 s default would let a jail that opens and drops connections in a
// loop hold tens of thousands of endpoints.
const timeWait = time.Second

// Stack serves one jail's TUN device. Its zero value is not usable: make
// one with Start.
//
// What bounds the memory a jail can make it hold:
//   - SYNs: MaxInFlight decided at once; gVisor's forwarder drops the
//     rest unanswered (Stats().TCP.ForwardMaxInFlightDrop), and the
//     jail's kernel retries them;
//   - connections: MaxConns, each with buffers of at most BufMax a way,
//     but for RoomyConns of them, BufRoomy;
//   - packets in: one reader that runs each through the stack before
//     reading the next (link.go), so the backlog waits in the TUN's queue,
//     500 packets, past which the kernel drops;
//   - packets out: 1024 queued for the writer, past which the stack
//     waits for room;
//   - fragments: gVisor reassembles at most 4 MiB per IP version, and
//     drops a datagram left incomplete for 30 s (v4) or 60 s (v6);
//   - ICMP errors, the UDP refusals among them: gVisor sends at most
//     1000 a second (a burst of 50);
//   - closed connections: each keeps its slot among MaxConns until its
//     endpoint is gone (tcp.go's linger), so the bounds above count it
//     too; one whose data the jail takes none of for Linger is reset
//     (gVisor looks at its probe timer, so within MaxRTO, 120 s, of its
//     window shutting), one the jail keeps taking data from lasts as an
//     open connection would; FIN-WAIT-2 and TIME-WAIT last 1 s. (The
//     Handler decides when a connection closes: the proxy's relay keeps
//     one whose server ended its side open while the jail sends on it,
//     and resets it after 10 to 20 s without.)
//
// Not bounded by time here: a SYN whose source never answers the SYN-ACK
// holds its MaxInFlight slot through gVisor's retransmits, about two
// minutes. So only SYNs from the jail's own addresses (Options.Sources)
// are decided at all: one from another source (IPV6_FREEBIND sends one
// without CAP_NET_RAW) is reset at once, and the jail's kernel answers
// its own SYN-ACKs.
type Stack struct {
	fd  int
	ns  *stack.Stack
	h   Handler
	sem chan struct{} // one token per open connection, MaxConns in all
	// How far buffers may grow from now on (sizeBuffers): bufs's BufMax,
	// or its BufRoomy while at most its RoomyConns connections are open;
	// grow is the one last set (0 before the first).
	bufs   Options
	growMu sync.Mutex
	grow   int
	// sources are the jail's own addresses: SYNs from others are reset.
	sources []netip.Addr
	link    *tunLink

	closing   atomic.Bool
	closeOnce sync.Once
	done      chan struct{}
	doneOnce  sync.Once
}

// Start serves the TUN fd (IFF_TUN|IFF_NO_PI|IFF_VNET_HDR: IPv4 and IPv6
// packets behind a virtio header; a device without one is refused) with h
// deciding each TCP connection the jail opens. The fd is made
// non-blocking, and is the Stack's from then on: Close closes it. On an
// error the caller still owns it.
func Start(fd int, opts Options, h Handler) (*Stack, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, errors.New("netstack: no handler")
	}
	s := &Stack{
		fd:      fd,
		h:       h,
		sem:     make(chan struct{}, opts.MaxConns),
		bufs:    opts,
		sources: slices.Clone(opts.Sources),
		done:    make(chan struct{}),
	}
	link, err := newLink(fd, opts.MTU, s.linkEnded)
	if err != nil {
		return nil, err
	}
	s.ns = stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol, ipv6.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocol, udp.NewProtocol, icmp.NewProtocol4, icmp.NewProtocol6},
	})
	if err := s.configure(link, opts); err != nil {
		s.ns.Destroy()
		link.close()
		return nil, err
	}
	// Only now does the stack read the TUN: the SYN that made the runner
	// start this helper is waiting in the TUN's queue, and had it been
	// read before the NIC was promiscuous and routed it would have been
	// dropped, costing the jail's first connection a 1 s retransmit.
	link.start()
	s.link = link
	return s, nil
}

// configure sets the stack up around link, which does not read yet.
func (s *Stack) configure(link *tunLink, opts Options) error {
	if err := tuneTCP(s.ns, opts); err != nil {
		return err
	}
	if err := s.sizeBuffers(); err != nil {
		return err
	}
	fwd := tcp.NewForwarder(s.ns, opts.BufDefault, opts.MaxInFlight, s.onSYN)
	s.ns.SetTransportProtocolHandler(tcp.ProtocolNumber, fwd.HandlePacket)
	s.ns.SetTransportProtocolHandler(udp.ProtocolNumber, s.onUDP)
	s.ns.SetTransportProtocolHandler(icmp.ProtocolNumber4, swallowEcho)
	s.ns.SetTransportProtocolHandler(icmp.ProtocolNumber6, swallowEcho)

	if err := s.ns.CreateNIC(nicID, link); err != nil {
		return fmt.Errorf("netstack: create the NIC: %s", err)
	}
	// Promiscuous: the NIC takes packets for any destination, since
	// every address the jail connects to is the stack's to answer.
	// Spoofing: it answers from those addresses.
	if err := s.ns.SetPromiscuousMode(nicID, true); err != nil {
		return fmt.Errorf("netstack: promiscuous mode: %s", err)
	}
	if err := s.ns.SetSpoofing(nicID, true); err != nil {
		return fmt.Errorf("netstack: spoofing: %s", err)
	}
	s.ns.SetRouteTable([]tcpip.Route{
		{Destination: header.IPv4EmptySubnet, NIC: nicID},
		{Destination: header.IPv6EmptySubnet, NIC: nicID},
	})
	return nil
}

// tuneTCP sets the TCP options tailscale runs gVisor with (its
// wgengine/netstack Create), and the buffer sizes.
func tuneTCP(ns *stack.Stack, opts Options) error {
	// SACK is off by default in gVisor; with it a packet lost to a full
	// TUN queue costs one retransmit, not a window's worth.
	sack := tcpip.TCPSACKEnabled(true)
	// RACK off: tailscale saw gVisor's RACK act on ACKs late, with
	// spurious retransmits and a shrunken congestion window
	// (tailscale/tailscale#9707).
	recovery := tcpip.TCPRecovery(0)
	// Reno, named rather than defaulted: cubic is more prone to an int
	// overflow in gVisor's congestion window arithmetic
	// (google/gvisor#11632).
	reno := tcpip.CongestionControlOption("reno")
	tw := tcpip.TCPTimeWaitTimeoutOption(timeWait)
	// FIN-WAIT-2 as short as TIME-WAIT: a connection the stack closed
	// keeps its slot until its endpoint is gone (tcp.go's linger), and a
	// jail that read to the end and never closes its socket (a pool's
	// idle connection) would hold it gVisor's default minute.
	fw2 := tcpip.TCPLingerTimeoutOption(timeWait)
	for _, o := range []struct {
		what string
		opt  tcpip.SettableTransportProtocolOption
	}{
		{"SACK", &sack},
		{"loss recovery", &recovery},
		{"congestion control", &reno},
		{"TIME-WAIT", &tw},
		{"FIN-WAIT-2", &fw2},
	} {
		if err := ns.SetTransportProtocolOption(tcp.ProtocolNumber, o.opt); err != nil {
			return fmt.Errorf("netstack: TCP %s option: %s", o.what, err)
		}
	}
	return nil
}

// sizeBuffers sets how far TCP buffers may grow from now on: BufRoomy
// while at most RoomyConns connections are open, BufMax past that. A
// connection's buffers grow as its data flows (gVisor's send buffer with
// its congestion window, its receive buffer with what the jail sends).
// Called as a connection opens and as it ends.
func (s *Stack) sizeBuffers() error {
	s.growMu.Lock()
	defer s.growMu.Unlock()
	max := s.bufs.BufMax
	if len(s.sem) <= s.bufs.RoomyConns {
		max = s.bufs.BufRoomy
	}
	if max == s.grow {
		return nil
	}
	rcv := tcpip.TCPReceiveBufferSizeRangeOption{Min: minBuf, Default: s.bufs.BufDefault, Max: max}
	snd := tcpip.TCPSendBufferSizeRangeOption{Min: minBuf, Default: s.bufs.BufDefault, Max: max}
	if err := s.ns.SetTransportProtocolOption(tcp.ProtocolNumber, &rcv); err != nil {
		return fmt.Errorf("netstack: TCP receive buffer option: %s", err)
	}
	if err := s.ns.SetTransportProtocolOption(tcp.ProtocolNumber, &snd); err != nil {
		return fmt.Errorf("netstack: TCP send buffer option: %s", err)
	}
	s.grow = max
	return nil
}

// Done is closed once the stack no longer reads the TUN: after Close, or
// when reading it fails (the device was deleted). A stack that stopped
// reading blackholes the jail's traffic, so its owner should end the run.
// The namespace's end is not such a failure: the TUN fd keeps the jail's
// network namespace alive until it is closed.
func (s *Stack) Done() <-chan struct{} {
	return s.done
}

// linkEnded is told by the link that it stopped reading the TUN.
func (s *Stack) linkEnded(error) {
	s.doneOnce.Do(func() { close(s.done) })
}

// Close stops the stack: it resets every connection the jail has through
// it, stops reading the TUN and closes the fd. Handler calls under way
// (a Dial) finish on their own; what they return is closed.
func (s *Stack) Close() {
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		// The reader stopped first, with no lock of the stack's held:
		// Destroy stops it holding the stack's lock, which a packet
		// being delivered may be waiting for (a reset's route), and
		// then both wait for ever.
		s.link.haltReading()
		s.ns.Destroy()
		// An endpoint whose handshake completed while Destroy ran is
		// missed by it, and with the NIC gone nothing would ever wake
		// its reader: abort what is left.
		for _, ep := range s.ns.RegisteredEndpoints() {
			ep.Abort()
		}
		s.link.close()
		s.linkEnded(nil)
		unix.Close(s.fd)
	})
}
