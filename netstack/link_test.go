// The link's own failure modes: a segment of many pieces, the resets of
// Close under load, a device made without the virtio header.

package netstack

import (
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// A server that writes many one-byte pieces while the jail's window is
// shut: gVisor's TCP queues each and, when the window opens, merges them
// into one segment without copying, past writev's 1024 pieces. Such a
// segment used to fail every send, and the connection hung.
func TestSegmentOfManyPieces(t *testing.T) {
	const bulk, small = 64 << 10, 3000
	j := newJailNet(t, 65520)
	addr := serve(t, "tcp", "127.0.0.1:0", func(c net.Conn) {
		c.Write(make([]byte, bulk))
		for range small {
			c.Write([]byte{'x'})
			time.Sleep(200 * time.Microsecond)
		}
		c.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, c)
	})
	s := j.start(t, DefaultOptions(), newTestHandler(toEcho(addr)))
	var c net.Conn
	var err error
	j.do(func() {
		d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) {
				unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 4096)
			})
		}}
		c, err = d.Dial("tcp", "198.18.0.1:80")
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The window stays shut while the pieces queue.
	time.Sleep(small*200*time.Microsecond + time.Second)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := io.Copy(io.Discard, c)
	if n != bulk+small {
		t.Errorf("read %d of %d bytes: %v", n, bulk+small, err)
	}
	if e := s.link.writeErrors.Load(); e != 0 {
		t.Errorf("the device refused %d packets", e)
	}
}

// Close ends every connection the jail has, even with data streaming on
// all of them and the writer's queue full: a packet the queue dropped would
// leave a gap, and the jail's kernel ignores a reset past one.
func TestCloseResetsBusyConnections(t *testing.T) {
	const conns = 100
	j := newJailNet(t, 65520)
	addr := serve(t, "tcp", "127.0.0.1:0", func(c net.Conn) {
		buf := make([]byte, 1<<20)
		for {
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	})
	s, err := Start(j.tun, DefaultOptions(), newTestHandler(toEcho(addr)))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var cs []net.Conn
	for range conns {
		c, err := j.dial("tcp", "198.18.0.1:80", 5*time.Second)
		if err != nil {
			s.Close()
			t.Fatal(err)
		}
		cs = append(cs, c)
		go func() {
			buf := make([]byte, 1<<16)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := c.Read(buf); err != nil {
					return
				}
			}
		}()
	}
	time.Sleep(time.Second)
	s.Close()
	close(stop)
	open := 0
	for _, c := range cs {
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		var err error
		for err == nil {
			_, err = c.Read(make([]byte, 1<<16))
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			open++
		} else if !errors.Is(err, syscall.ECONNRESET) && err != io.EOF {
			t.Errorf("a connection ended with %v", err)
		}
		c.Close()
	}
	if open > 0 {
		t.Errorf("after Close, %d of %d connections are still open", open, conns)
	}
}

// After Close the link takes no packet, and keeps none.
func TestLinkAfterClose(t *testing.T) {
	j := newJailNet(t, 65520)
	s, err := Start(j.tun, DefaultOptions(), newTestHandler(toEcho("127.0.0.1:1")))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for range 100 {
		pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{Payload: buffer.MakeWithData([]byte{0x45})})
		var pkts stack.PacketBufferList
		pkts.PushBack(pkt)
		if n, err := s.link.WritePackets(pkts); n != 0 || err == nil {
			t.Fatalf("WritePackets after Close: %d, %v; want 0 and an error", n, err)
		}
		pkt.DecRef()
	}
	if q := len(s.link.q); q != 0 {
		t.Errorf("%d packets queued after Close", q)
	}
}

// A device made without IFF_VNET_HDR would have every packet misread:
// Start refuses it rather than run a jail with no working network.
func TestDeviceWithoutVnetHeader(t *testing.T) {
	j := newJailNetFlags(t, 65520, unix.IFF_TUN|unix.IFF_NO_PI)
	_, err := Start(j.tun, DefaultOptions(), newTestHandler(toEcho("127.0.0.1:1")))
	if err == nil || !strings.Contains(err.Error(), "IFF_VNET_HDR") {
		t.Fatalf("Start on a device without a virtio header: %v; want a refusal naming IFF_VNET_HDR", err)
	}
}
