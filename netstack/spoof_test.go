// A SYN from a source that is not the jail's own address (IPV6_FREEBIND
// sends one without CAP_NET_RAW) is reset without a Dial: decided, it
// would hold one of the MaxInFlight slots for the minutes gVisor retries
// its SYN-ACK, and 64 of them would stall every connection of the jail.

package netstack

import (
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestSpoofedSourceReset(t *testing.T) {
	j := newJailNet(t, 65520)
	srv := echoServer(t, "tcp", "127.0.0.1:0")
	h := newTestHandler(toEcho(srv))
	j.start(t, DefaultOptions(), h)
	dst := netip.MustParseAddr("fd6a:696c:0:1::c612:7")
	for i := 0; i < 80; i++ {
		fd, err := j.socket(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_FREEBIND, 1); err != nil {
			t.Skipf("IPV6_FREEBIND: %v", err)
		}
		src := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(i + 1)})
		if err := unix.Bind(fd, &unix.SockaddrInet6{Addr: src.As16()}); err != nil {
			t.Fatalf("bind %s: %v", src, err)
		}
		if err := unix.Connect(fd, &unix.SockaddrInet6{Addr: dst.As16(), Port: 80}); err != unix.EINPROGRESS {
			t.Fatalf("connect from %s: %v", src, err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if n := h.dials.Load(); n != 0 {
		t.Errorf("%d Dials for SYNs from spoofed sources; want none", n)
	}
	// The jail's own connections are decided as ever.
	c, err := j.dial("tcp", "198.18.0.7:80", 2*time.Second)
	if err != nil {
		t.Fatalf("a connection from the jail's own address after the spoofed SYNs: %v", err)
	}
	c.Close()
}
