// Options: the stack's limits and sizes, and their checks.

package netstack

import (
	"fmt"
	"net/netip"
	"time"
)

// Options sizes the stack. Every limit bounds what a jail can make its
// helper hold: the helper is in the run's cgroup, so a flood costs the
// jail itself, and nobody else.
type Options struct {
	// MTU of the TUN device. It decides throughput: at 1500 the
	// jail-to-stack leg moved about a tenth of host loopback's rate, at
	// 65520 about six tenths (docs/design/netstack.md §2).
	MTU uint32
	// MaxInFlight bounds the SYNs being decided (Handler.Dial running)
	// at once; gVisor drops SYNs past it, so the jail's kernel retries.
	MaxInFlight int
	// MaxConns bounds the connections open at once, counted from Dial
	// to Serve's return; a SYN past it gets a reset and
	// Handler.Overloaded, without a Dial.
	MaxConns int
	// BufDefault and BufMax size each connection's TCP receive and send
	// buffers in the stack: gVisor grows both up to BufMax as the
	// connection's window grows. The jail-to-stack leg has no delay, so
	// small windows suffice.
	BufDefault, BufMax int
	// BufRoomy is what buffers may grow to instead, while at most
	// RoomyConns connections are open: a download's send buffer of a few
	// 64 KiB segments stalls the relay behind it (the bench's download:
	// 1.44 GB/s at 1 MiB, 1.54 at 2 MiB, 1.59 at 4 MiB), but every
	// connection's at 4 MiB would be 2 GiB. gVisor never shrinks a buffer
	// it grew, and the count rises past RoomyConns before another
	// connection's can grow, so at most RoomyConns connections (give or
	// take one racing the switch) hold more than BufMax a way.
	BufRoomy, RoomyConns int
	// Linger is how long a connection the stack has closed may keep data
	// the jail takes none of (its window shut) before it is reset; its
	// slot is held until its endpoint is gone (see Stack's bounds).
	Linger time.Duration
	// Sources are the jail's own addresses on the TUN device
	// (jail/tun.c): a SYN from any other source is reset without a
	// Dial. A command without CAP_NET_RAW can still send one, with
	// IPV6_FREEBIND, and each would hold a MaxInFlight slot for the two
	// minutes of gVisor's SYN-ACK retries.
	Sources []netip.Addr
}

// The jail's addresses on its TUN device, as jail/tun.c sets them.
var (
	jailV4 = netip.AddrFrom4([4]byte{192, 0, 0, 2})
	jailV6 = netip.MustParseAddr("fd6a:696c::2")
)

// DefaultOptions are the sizes docs/design/netstack.md measured: 64 SYNs
// in flight, 256 connections, 256 KiB buffers growing to 1 MiB (with
// MTU 65520); and growing to 4 MiB while at most 2 connections are open.
func DefaultOptions() Options {
	return Options{
		MTU:         65520,
		MaxInFlight: 64,
		MaxConns:    256,
		BufDefault:  256 << 10,
		BufMax:      1 << 20,
		BufRoomy:    4 << 20,
		RoomyConns:  2,
		Linger:      30 * time.Second,
		Sources:     []netip.Addr{jailV4, jailV6},
	}
}

// minMTU is IPv6's minimum link MTU (RFC 8200 §5): below it the v6 half
// of the stack cannot work.
const minMTU = 1280

// minBuf is gVisor's smallest TCP buffer (tcp.MinBufferSize).
const minBuf = 4 << 10

// check refuses options that would disable a limit: a zero is a mistake,
// never "unlimited".
func (o Options) check() error {
	switch {
	case o.MTU < minMTU || o.MTU > 65535:
		return fmt.Errorf("netstack options: MTU %d is outside %d-65535", o.MTU, minMTU)
	case o.MaxInFlight < 1:
		return fmt.Errorf("netstack options: MaxInFlight %d is not positive", o.MaxInFlight)
	case o.MaxConns < 1:
		return fmt.Errorf("netstack options: MaxConns %d is not positive", o.MaxConns)
	case o.BufDefault < minBuf || o.BufMax < o.BufDefault:
		return fmt.Errorf("netstack options: buffers %d (default) and %d (max) need %d <= default <= max", o.BufDefault, o.BufMax, minBuf)
	case o.Linger <= 0:
		return fmt.Errorf("netstack options: Linger %v is not positive", o.Linger)
	case o.BufRoomy < o.BufMax || o.RoomyConns < 0:
		return fmt.Errorf("netstack options: BufRoomy %d is below BufMax %d, or RoomyConns %d is negative", o.BufRoomy, o.BufMax, o.RoomyConns)
	case len(o.Sources) == 0:
		return fmt.Errorf("netstack options: no Sources: every SYN would be reset")
	}
	return nil
}
