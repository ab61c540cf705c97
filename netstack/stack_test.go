// Tests of the stack on a real TUN in a real network namespace: TCP
// through it, refusals, and its option checks.

package netstack

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
)

// toEcho routes every destination to one echo server on the host.
func toEcho(addr string) func(netip.AddrPort) (string, error) {
	return func(netip.AddrPort) (string, error) { return addr, nil }
}

// roundTrip sends n random bytes through c and checks they come back.
func roundTrip(t *testing.T, c net.Conn, n int) {
	t.Helper()
	out := make([]byte, n)
	rand.Read(out)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Write(out)
		errc <- err
	}()
	in := make([]byte, n)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, in); err != nil {
		t.Fatalf("read back: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("write: %v", err)
	}
	if !bytes.Equal(in, out) {
		t.Fatal("the bytes that came back differ from those sent")
	}
}

func TestTCPThrough(t *testing.T) {
	for _, tc := range []struct{ name, dst, want, server string }{
		{"v4", "198.18.0.1:80", "198.18.0.1:80", "127.0.0.1:0"},
		{"v6", "[fd6a:696c:0:1::c612:1]:443", "[fd6a:696c:0:1::c612:1]:443", "[::1]:0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newJailNet(t, 65520)
			h := newTestHandler(toEcho(echoServer(t, "tcp", tc.server)))
			j.start(t, DefaultOptions(), h)
			c, err := j.dial("tcp", tc.dst, 5*time.Second)
			if err != nil {
				t.Fatalf("connect from the jail: %v", err)
			}
			defer c.Close()
			roundTrip(t, c, 1<<20)
			if got := h.lastDialed().String(); got != tc.want {
				t.Errorf("Dial was asked for %s, want %s", got, tc.want)
			}
			// The jail's end of stream reaches the server, and the
			// server's comes back.
			c.(*net.TCPConn).CloseWrite()
			if n, err := io.Copy(io.Discard, c); err != nil || n != 0 {
				t.Errorf("after half-close: %d bytes, %v; want 0, EOF", n, err)
			}
		})
	}
}

func TestRefusedIsReset(t *testing.T) {
	j := newJailNet(t, 65520)
	h := newTestHandler(func(netip.AddrPort) (string, error) { return "", errRefused })
	j.start(t, DefaultOptions(), h)
	for _, dst := range []string{"198.18.0.7:443", "[fd6a:696c:0:1::c612:7]:443"} {
		start := time.Now()
		c, err := j.dial("tcp", dst, 5*time.Second)
		took := time.Since(start)
		if err == nil {
			c.Close()
			t.Fatalf("%s: connected; want refused", dst)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("%s: %v; want ECONNREFUSED", dst, err)
		}
		if took > time.Second {
			t.Errorf("%s: refused after %v; want under 1s", dst, took)
		}
		t.Logf("%s refused in %v", dst, took)
	}
}

func TestUDPRefused(t *testing.T) {
	j := newJailNet(t, 65520)
	h := newTestHandler(toEcho("127.0.0.1:1"))
	j.start(t, DefaultOptions(), h)
	for _, tc := range []struct{ dst, want string }{
		{"8.8.8.8:53", "8.8.8.8:53"},
		{"[fd6a:696c:0:1::c612:1]:443", "[fd6a:696c:0:1::c612:1]:443"},
	} {
		c, err := j.dial("udp", tc.dst, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte("query")); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(time.Second))
		_, err = c.Read(make([]byte, 512))
		c.Close()
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("%s: recv got %v; want ECONNREFUSED", tc.dst, err)
		}
		select {
		case got := <-h.udp:
			if got.String() != tc.want {
				t.Errorf("RefusedUDP(%s); want %s", got, tc.want)
			}
		case <-time.After(time.Second):
			t.Errorf("%s: RefusedUDP not called", tc.dst)
		}
	}
}

func TestMaxConns(t *testing.T) {
	j := newJailNet(t, 65520)
	h := newTestHandler(toEcho(echoServer(t, "tcp", "127.0.0.1:0")))
	opts := DefaultOptions()
	opts.MaxConns = 3
	j.start(t, opts, h)
	var open []net.Conn
	for range opts.MaxConns {
		c, err := j.dial("tcp", "198.18.0.1:80", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		roundTrip(t, c, 10)
		open = append(open, c)
	}
	c, err := j.dial("tcp", "198.18.0.2:80", 5*time.Second)
	if err == nil {
		c.Close()
		t.Fatal("a connection past MaxConns was accepted")
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("past MaxConns: %v; want ECONNREFUSED", err)
	}
	select {
	case dst := <-h.overloaded:
		if dst.String() != "198.18.0.2:80" {
			t.Errorf("Overloaded(%s); want 198.18.0.2:80", dst)
		}
	case <-time.After(time.Second):
		t.Error("Overloaded not called")
	}
	if n := h.dials.Load(); n != int64(opts.MaxConns) {
		t.Errorf("%d Dials; want %d (none for the one past the limit)", n, opts.MaxConns)
	}
	// A slot frees once Serve returns.
	open[0].Close()
	deadline := time.Now().Add(3 * time.Second)
	for {
		c, err := j.dial("tcp", "198.18.0.3:80", 5*time.Second)
		if err == nil {
			roundTrip(t, c, 10)
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no slot freed after a connection closed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// bufferMaxes is how far the stack lets send and receive buffers grow now.
func bufferMaxes(t *testing.T, s *Stack) (snd, rcv int) {
	t.Helper()
	var so tcpip.TCPSendBufferSizeRangeOption
	var ro tcpip.TCPReceiveBufferSizeRangeOption
	if err := s.ns.TransportProtocolOption(tcp.ProtocolNumber, &so); err != nil {
		t.Fatal(err)
	}
	if err := s.ns.TransportProtocolOption(tcp.ProtocolNumber, &ro); err != nil {
		t.Fatal(err)
	}
	return so.Max, ro.Max
}

// Buffers may grow to BufRoomy while at most RoomyConns connections are
// open, and only to BufMax while more are: the switch follows each open
// and each end.
func TestRoomyBuffers(t *testing.T) {
	j := newJailNet(t, 65520)
	h := newTestHandler(toEcho(echoServer(t, "tcp", "127.0.0.1:0")))
	opts := DefaultOptions()
	opts.RoomyConns = 1
	s := j.start(t, opts, h)
	want := func(what string, max int) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Second)
		for {
			snd, rcv := bufferMaxes(t, s)
			if snd == max && rcv == max {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: buffers grow to %d (send) and %d (receive); want %d", what, snd, rcv, max)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	want("no connection", opts.BufRoomy)
	first, err := j.dial("tcp", "198.18.0.1:80", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	roundTrip(t, first, 10)
	want("one connection", opts.BufRoomy)
	second, err := j.dial("tcp", "198.18.0.2:80", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, second, 10)
	want("two connections", opts.BufMax)
	second.Close()
	want("one left", opts.BufRoomy)
}

// openConns is how many slots among MaxConns are taken.
func openConns(s *Stack) int { return len(s.sem) }

// A connection the jail's side has closed keeps its slot while its
// endpoint still holds what the jail has not taken: once the jail closes
// its socket, or past Linger with the jail's window shut.
func TestLingeringConnectionKeepsItsSlot(t *testing.T) {
	const size = 6 << 20
	addr := serve(t, "tcp", "127.0.0.1:0", func(c net.Conn) {
		c.Write(make([]byte, size))
	})
	for _, end := range []string{"the jail closes", "linger runs out"} {
		t.Run(end, func(t *testing.T) {
			j := newJailNet(t, 65520)
			opts := DefaultOptions()
			opts.Linger = time.Second
			s := j.start(t, opts, newTestHandler(toEcho(addr)))
			c, err := j.dial("tcp", "198.18.0.1:80", 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.(*net.TCPConn).SetReadBuffer(64 << 10)
			// Take all but the last 2 MiB, which the stack's send
			// buffer then holds, and end the jail's writing: the relay
			// is done, and its endpoint left with data.
			if _, err := io.ReadFull(c, make([]byte, size-2<<20)); err != nil {
				t.Fatal(err)
			}
			c.(*net.TCPConn).CloseWrite()
			time.Sleep(300 * time.Millisecond)
			if n := openConns(s); n != 1 {
				t.Fatalf("%d slots taken while the closed connection holds data; want 1", n)
			}
			if end == "the jail closes" {
				c.Close()
			}
			deadline := time.Now().Add(15 * time.Second)
			for openConns(s) != 0 {
				if time.Now().After(deadline) {
					t.Fatalf("the slot was not given back after %s", end)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// closingHandler closes the jail's side whole once the server's data
// ends, not only for writing, as proxy's relay does to a connection the
// jail then leaves idle (halfOpen).
type closingHandler struct{ *testHandler }

func (h closingHandler) Serve(_ netip.AddrPort, client, upstream net.Conn) {
	io.Copy(client, upstream)
	client.Close()
	upstream.Close()
}

// A connection the server ended, which the jail read to the end but
// keeps open (a pool's idle connection), gives its slot back in seconds,
// not after gVisor's minute of FIN-WAIT-2.
func TestFinWait2GivesTheSlotBack(t *testing.T) {
	addr := serve(t, "tcp", "127.0.0.1:0", func(c net.Conn) { c.Write([]byte("hello")) })
	j := newJailNet(t, 65520)
	s := j.start(t, DefaultOptions(), closingHandler{newTestHandler(toEcho(addr))})
	c, err := j.dial("tcp", "198.18.0.1:80", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(c); err != nil || string(b) != "hello" {
		t.Fatalf("read %q, %v; want hello and the end", b, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for openConns(s) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the slot of a connection in FIN-WAIT-2 was not given back in 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestClose(t *testing.T) {
	j := newJailNet(t, 65520)
	h := newTestHandler(toEcho(echoServer(t, "tcp", "127.0.0.1:0")))
	s := j.start(t, DefaultOptions(), h)
	c, err := j.dial("tcp", "198.18.0.1:80", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	roundTrip(t, c, 10)
	select {
	case <-s.Done():
		t.Fatal("Done before Close")
	default:
	}
	s.Close()
	select {
	case <-s.Done():
	case <-time.After(time.Second):
		t.Fatal("Done not closed by Close")
	}
	// The relay ends: the jail's connection was reset.
	finished := make(chan struct{})
	go func() { h.serving.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Fatal("Serve still running after Close")
	}
	s.Close() // twice is harmless
}

func TestOptionsChecked(t *testing.T) {
	for _, mutate := range []func(*Options){
		func(o *Options) { o.MTU = 576 },
		func(o *Options) { o.MaxInFlight = 0 },
		func(o *Options) { o.MaxConns = 0 },
		func(o *Options) { o.BufDefault = 0 },
		func(o *Options) { o.BufMax = o.BufDefault - 1 },
		func(o *Options) { o.BufRoomy = o.BufMax - 1 },
		func(o *Options) { o.RoomyConns = -1 },
		func(o *Options) { o.Linger = 0 },
	} {
		o := DefaultOptions()
		mutate(&o)
		if _, err := Start(-1, o, newTestHandler(nil)); err == nil {
			t.Errorf("Start took %+v", o)
		}
	}
	if err := DefaultOptions().check(); err != nil {
		t.Errorf("the defaults are refused: %v", err)
	}
}

func TestDeviceGone(t *testing.T) {
	j := newJailNet(t, 65520)
	s := j.start(t, DefaultOptions(), newTestHandler(toEcho("127.0.0.1:1")))
	if out, err := j.command("ip", "link", "del", "jail0").CombinedOutput(); err != nil {
		t.Fatalf("delete the TUN device: %v: %s", err, out)
	}
	select {
	case <-s.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("Done not closed when the device went away")
	}
}
