// Tests of what a jail cannot make the stack do: answer ping, grow
// without bound under a SYN flood or a stream of malformed packets, or
// spin while idle.

package netstack

import (
	"encoding/binary"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestNoEchoReply(t *testing.T) {
	j := newJailNet(t, 65520)
	s := j.start(t, DefaultOptions(), newTestHandler(toEcho("127.0.0.1:1")))
	for _, tc := range []struct {
		name        string
		domain      int
		proto       int
		to          unix.Sockaddr
		req, reply  byte
		requestsGot func() uint64
	}{
		{"v4", unix.AF_INET, unix.IPPROTO_ICMP, &unix.SockaddrInet4{Addr: [4]byte{198, 18, 0, 1}}, 8, 0,
			s.ns.Stats().ICMP.V4.PacketsReceived.EchoRequest.Value},
		{"v6", unix.AF_INET6, unix.IPPROTO_ICMPV6, &unix.SockaddrInet6{Addr: netip.MustParseAddr("fd6a:696c:0:1::c612:1").As16()}, 128, 129,
			s.ns.Stats().ICMP.V6.PacketsReceived.EchoRequest.Value},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, err := j.socket(tc.domain, unix.SOCK_RAW, tc.proto)
			if err != nil {
				t.Fatalf("raw socket in the jail: %v", err)
			}
			defer unix.Close(fd)
			tv := unix.NsecToTimeval((300 * time.Millisecond).Nanoseconds())
			if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
				t.Fatal(err)
			}
			msg := []byte{tc.req, 0, 0, 0, 0x4a, 0x4c, 0, 1, 'p', 'i', 'n', 'g'}
			if tc.domain == unix.AF_INET {
				binary.BigEndian.PutUint16(msg[2:], inetChecksum(msg)) // the kernel does ICMPv6's
			}
			if err := unix.Sendto(fd, msg, 0, tc.to); err != nil {
				t.Fatalf("send echo request: %v", err)
			}
			buf := make([]byte, 1500)
			for {
				n, _, err := unix.Recvfrom(fd, buf, 0)
				if err != nil {
					break // the timeout: nothing came back
				}
				icmp := buf[:n]
				if tc.domain == unix.AF_INET {
					icmp = icmp[int(buf[0]&0x0f)*4:] // a raw IPv4 socket reads the IP header too
				}
				if len(icmp) > 0 && icmp[0] == tc.reply {
					t.Fatal("the stack answered an echo request")
				}
			}
			if tc.requestsGot() == 0 {
				t.Fatal("the echo request never reached the stack, so the test proves nothing")
			}
		})
	}
}

// inetChecksum is RFC 1071's checksum.
func inetChecksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return ^uint16(sum)
}

// heapPeak samples the heap until stop is closed, and reports its peak.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	peak := make(chan uint64, 1)
	go func() {
		var max uint64
		var m runtime.MemStats
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&m)
			max = maxOf(max, m.HeapAlloc)
			select {
			case <-stop:
				peak <- max
				return
			case <-tick.C:
			}
		}
	}()
	return peak
}

func maxOf(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

// heapBound is the test's generous bound on the whole test process's heap.
const heapBound = 64 << 20

func TestSYNFlood(t *testing.T) {
	const flood = 2000
	j := newJailNet(t, 65520)
	echo := echoServer(t, "tcp", "127.0.0.1:0")
	unblock := make(chan struct{})
	var blocked, peakBlocked atomic.Int64
	h := newTestHandler(func(dst netip.AddrPort) (string, error) {
		if dst.Port() != 81 {
			return echo, nil
		}
		// A black hole: the dial hangs until the test lets it fail.
		n := blocked.Add(1)
		for {
			p := peakBlocked.Load()
			if n <= p || peakBlocked.CompareAndSwap(p, n) {
				break
			}
		}
		<-unblock
		blocked.Add(-1)
		return "", errRefused
	})
	opts := DefaultOptions()
	s := j.start(t, opts, h)
	goroutines := runtime.NumGoroutine()

	stop := make(chan struct{})
	peak := heapPeak(stop)
	var fds []int
	j.do(func() {
		for i := range flood {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Errorf("socket %d: %v", i, err)
				return
			}
			fds = append(fds, fd)
			err = unix.Connect(fd, &unix.SockaddrInet4{Addr: [4]byte{198, 18, 1, byte(i % 250)}, Port: 81})
			if err != unix.EINPROGRESS {
				t.Errorf("connect %d: %v; want EINPROGRESS", i, err)
				return
			}
		}
	})
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	// Long enough for the SYNs and their first retransmits (at 1 s).
	time.Sleep(1500 * time.Millisecond)
	grown := runtime.NumGoroutine() - goroutines
	close(stop)
	heap := <-peak
	drops := s.ns.Stats().TCP.ForwardMaxInFlightDrop.Value()
	t.Logf("%d connects: heap peak %.1f MiB, %d more goroutines, %d Dials at once at most, %d SYNs dropped past MaxInFlight",
		flood, float64(heap)/(1<<20), grown, peakBlocked.Load(), drops)
	if heap > heapBound {
		t.Errorf("heap peaked at %d bytes; want under %d", heap, heapBound)
	}
	if p := peakBlocked.Load(); p > int64(opts.MaxInFlight) {
		t.Errorf("%d Dials at once; want at most MaxInFlight %d", p, opts.MaxInFlight)
	}
	if grown > opts.MaxInFlight+64 {
		t.Errorf("%d more goroutines; want about MaxInFlight (%d)", grown, opts.MaxInFlight)
	}
	if drops == 0 {
		t.Error("no SYN dropped past MaxInFlight: the flood did not reach the limit")
	}

	// Once the black hole answers, the jail's other connections work.
	close(unblock)
	for _, fd := range fds {
		unix.Close(fd)
	}
	fds = nil
	c, err := j.dial("tcp", "198.18.0.1:80", 5*time.Second)
	if err != nil {
		t.Fatalf("a connection after the flood: %v", err)
	}
	defer c.Close()
	roundTrip(t, c, 1000)
}

func TestMalformedPackets(t *testing.T) {
	const packets = 20000
	j := newJailNet(t, 65520)
	h := newTestHandler(toEcho(echoServer(t, "tcp", "127.0.0.1:0")))
	st := j.start(t, DefaultOptions(), h)
	var index int
	var err error
	j.do(func() {
		var i *net.Interface
		if i, err = net.InterfaceByName("jail0"); err == nil {
			index = i.Index
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// A packet socket on jail0 writes any bytes at all to the TUN,
	// which the stack then reads as a packet from the jail.
	fd, err := j.socket(unix.AF_PACKET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)

	stop := make(chan struct{})
	peak := heapPeak(stop)
	rng := rand.New(rand.NewPCG(1, 2))
	send := func(proto uint16, b []byte) {
		to := &unix.SockaddrLinklayer{Ifindex: index, Protocol: htons(proto)}
		for {
			err := unix.Sendto(fd, b, 0, to)
			if err != unix.ENOBUFS && err != unix.EAGAIN {
				if err != nil {
					t.Fatalf("send a packet: %v", err)
				}
				return
			}
			time.Sleep(time.Millisecond) // the TUN queue is full
		}
	}
	for i := range packets {
		switch i % 4 {
		case 0: // noise of any length, any version
			b := make([]byte, 1+rng.IntN(1500))
			for k := range b {
				b[k] = byte(rng.Uint32())
			}
			send(unix.ETH_P_IP, b)
		case 1: // an IPv4 header that lies about its lengths
			b := ipv4Header(rng, 20+rng.IntN(200))
			binary.BigEndian.PutUint16(b[2:], uint16(rng.Uint32()))
			b[0] = 0x40 | byte(rng.IntN(16))
			send(unix.ETH_P_IP, b)
		case 2: // first fragments that never complete, each its own datagram
			b := ipv4Header(rng, 1400)
			binary.BigEndian.PutUint16(b[4:], uint16(i)) // id
			binary.BigEndian.PutUint16(b[6:], 0x2000)    // more fragments, offset 0
			binary.BigEndian.PutUint16(b[10:], 0)
			binary.BigEndian.PutUint16(b[10:], inetChecksum(b[:20]))
			send(unix.ETH_P_IP, b)
		case 3: // IPv6 with a random chain of extension headers
			b := make([]byte, 40+rng.IntN(600))
			for k := range b {
				b[k] = byte(rng.Uint32())
			}
			b[0] = 0x60
			binary.BigEndian.PutUint16(b[4:], uint16(len(b)-40))
			b[6] = []byte{0, 43, 44, 60, 6, 17, 58}[rng.IntN(7)]
			// From the jail's own address, as its sockets' packets
			// are: a SYN in the noise then gets the kernel's reset,
			// not a handshake that waits for an ACK from nowhere.
			copy(b[8:24], netip.MustParseAddr("fd6a:696c::2").AsSlice())
			copy(b[24:40], netip.MustParseAddr("fd6a:696c:0:1::c612:1").AsSlice())
			send(unix.ETH_P_IPV6, b)
		}
	}
	select {
	case <-st.Done():
		t.Fatal("the stack stopped reading the TUN")
	default:
	}
	// The stack still works, promptly.
	c, err := j.dial("tcp", "198.18.0.1:80", 5*time.Second)
	close(stop)
	heap := <-peak
	if err != nil {
		t.Fatalf("a connection after %d malformed packets: %v", packets, err)
	}
	defer c.Close()
	roundTrip(t, c, 1000)
	t.Logf("%d malformed packets: heap peak %.1f MiB", packets, float64(heap)/(1<<20))
	if heap > heapBound {
		t.Errorf("heap peaked at %d bytes; want under %d", heap, heapBound)
	}
}

// ipv4Header is a valid IPv4 UDP packet of n bytes to 198.18.0.1.
func ipv4Header(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for k := 20; k < n; k++ {
		b[k] = byte(rng.Uint32())
	}
	b[0] = 0x45
	binary.BigEndian.PutUint16(b[2:], uint16(n))
	b[8] = 64
	b[9] = unix.IPPROTO_UDP
	copy(b[12:16], []byte{192, 0, 0, 2})
	copy(b[16:20], []byte{198, 18, 0, 1})
	binary.BigEndian.PutUint16(b[10:], inetChecksum(b[:20]))
	return b
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// TestIdle checks the stack costs nothing while the jail sends nothing:
// no polling loop, no timers firing.
func TestIdle(t *testing.T) {
	j := newJailNet(t, 65520)
	j.start(t, DefaultOptions(), newTestHandler(toEcho("127.0.0.1:1")))
	runtime.GC()
	time.Sleep(100 * time.Millisecond)
	before := cpuTime(t)
	time.Sleep(time.Second)
	used := cpuTime(t) - before
	status, _ := os.ReadFile("/proc/self/status")
	var threads, rss string
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			switch f[0] {
			case "Threads:":
				threads = f[1]
			case "VmRSS:":
				rss = f[1] + " kB"
			}
		}
	}
	t.Logf("idle for 1s: %v of CPU; the test process has %s threads, RSS %s", used, threads, rss)
	if used > 50*time.Millisecond {
		t.Errorf("idle stack used %v of CPU in 1s; want (next to) none", used)
	}
}

func cpuTime(t *testing.T) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
