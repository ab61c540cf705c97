// Package netstack terminates a jail's network traffic in user space: the
// TUN device the jail's PID 1 made in the jail's network namespace is
// served by gVisor's TCP/IP stack, on jail's side, outside the jail. Every
// TCP connection the jail opens is offered to a Handler before its
// handshake completes (a refusal is a reset, at once); UDP gets "port
// unreachable" (the jail's resolver is on its loopback, not behind the
// TUN); ICMP gets nothing. The stack is bounded: a jail that floods it
// hurts only itself.
package netstack

import (
	"net"
	"net/netip"
)

// Handler is the policy the stack asks, and the relay it hands accepted
// connections to (proxy/ implements it).
type Handler interface {
	// Dial decides on a TCP connection the jail opens to dst, and opens
	// the upstream one on the host. It is called in a goroutine of its
	// own for each SYN, before the jail's handshake completes: an error
	// resets the jail's connection.
	Dial(dst netip.AddrPort) (net.Conn, error)
	// Serve owns an accepted connection: client is the jail's side,
	// upstream what Dial returned. It returns when both are done.
	Serve(dst netip.AddrPort, client, upstream net.Conn)
	// RefusedUDP is told of a datagram the jail sent through the TUN,
	// which the stack answered with ICMP port unreachable.
	RefusedUDP(dst netip.AddrPort)
	// Overloaded is told of a connection refused because the run
	// already had Options.MaxConns open.
	Overloaded(dst netip.AddrPort)
}
