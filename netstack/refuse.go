// What the stack refuses without asking: UDP (port unreachable) and ICMP
// echo (no answer).

package netstack

import "gvisor.dev/gvisor/pkg/tcpip/stack"

// onUDP is the stack's handler for every UDP datagram the jail sends
// through the TUN. It returns false, "not handled", so gVisor answers
// ICMP port unreachable (within its ICMP rate limit) and the jail's
// socket gets ECONNREFUSED. It runs on the packet path: Handler.RefusedUDP
// must not block. No udp.Forwarder: its request clones every datagram,
// for a handler that never uses it.
func (s *Stack) onUDP(id stack.TransportEndpointID, _ *stack.PacketBuffer) bool {
	s.h.RefusedUDP(addrPort(id.LocalAddress, id.LocalPort))
	return false
}

// swallowEcho takes the ICMP packets gVisor hands to transport handlers
// (echo requests and replies) and drops them. Taken, an echo request gets
// no reply: gVisor answers IPv6 echo for any address its promiscuous NIC
// accepts, and the jail must not see every address as reachable.
func swallowEcho(stack.TransportEndpointID, *stack.PacketBuffer) bool {
	return true
}
