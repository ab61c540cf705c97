// The link: the jail's TUN device (IFF_TUN|IFF_NO_PI|IFF_VNET_HDR) between
// the jail's kernel and gVisor's stack: a reader and a writer of the fd
// (linkio.go), so that the jail's kernel receiving a segment (which
// happens inside the write) overlaps the stack making the next one. Here:
// its making, its queue, its end.

package netstack

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/link/channel"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// writeQueue is how many packets the stack may have waiting for the
// writer. A sender finding it full waits, as it would in a blocking
// write: a packet dropped here would be one the stack counts as sent, and
// the jail's kernel takes a reset only with the sequence number it
// expects, so a gap left open at the end would keep the jail's connection
// from ever being reset. A packet holds its data's chunks (up to 64 KiB,
// even for a small segment, and past the moment TCP lets go of them): at
// most about 64 MiB more than MaxConns and BufMax bound.
const writeQueue = 1024

// flushTime bounds how long close waits for the writer to send what is
// queued.
const flushTime = time.Second

// tunLink is the stack's link endpoint on the TUN fd: gVisor's channel
// endpoint for what a link must answer (MTU, capabilities, attachment),
// with its own queue to the writer.
type tunLink struct {
	*channel.Endpoint
	f     *os.File // a copy of the fd, in Go's poller: a read can be stopped
	ended func(error)
	q     chan *stack.PacketBuffer // to the writer
	done  chan struct{}            // closed by close: nothing more is queued

	mu        sync.Mutex
	started   bool
	stopRead  context.CancelFunc
	stopWrite context.CancelFunc
	reading   sync.WaitGroup
	writing   sync.WaitGroup
	closeOnce sync.Once

	// writeErrors counts packets the device refused (lost as on a wire):
	// a count that grows points at a bug, as segments of too many pieces
	// were.
	writeErrors atomic.Uint64
}

// newLink wraps a copy of the TUN fd, made non-blocking, so that the
// caller keeps fd (and closes it) whatever happens here; ended is called
// when reading fails (the device went away), or the writer cannot start.
func newLink(fd int, mtu uint32, ended func(error)) (*tunLink, error) {
	// Every packet is read and written behind a virtio header: a device
	// without one would have each misread, and the jail would have no
	// network while its run went on.
	ifr, err := unix.NewIfreq("")
	if err != nil {
		return nil, fmt.Errorf("netstack: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.TUNGETIFF, ifr); err != nil {
		return nil, fmt.Errorf("netstack: the TUN device's flags: %w", err)
	}
	if want := uint16(unix.IFF_TUN | unix.IFF_NO_PI | unix.IFF_VNET_HDR); ifr.Uint16()&want != want {
		return nil, fmt.Errorf("netstack: the TUN device has flags %#x, not IFF_TUN|IFF_NO_PI|IFF_VNET_HDR", ifr.Uint16())
	}
	own, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("netstack: the TUN fd: %w", err)
	}
	// TUN_F_CSUM: the jail's kernel may leave its TCP checksums for this
	// side to finish, which the stack never does (it checks none).
	if err := unix.IoctlSetInt(own, unix.TUNSETOFFLOAD, unix.TUN_F_CSUM); err != nil {
		unix.Close(own)
		return nil, fmt.Errorf("netstack: the TUN's checksum offload: %w", err)
	}
	if err := unix.SetNonblock(own, true); err != nil {
		unix.Close(own)
		return nil, fmt.Errorf("netstack: the TUN fd: %w", err)
	}
	ep := channel.New(0, mtu, "")
	// RX: the jail's kernel wrote the packet, with a checksum or (under
	// TUN_F_CSUM) a partial one to be finished by hardware that does not
	// exist; the stack must not check it. TX: the writer marks each TCP
	// segment NEEDS_CSUM (linkio.go), so the stack need not sum it.
	ep.LinkEPCapabilities = stack.CapabilityRXChecksumOffload | stack.CapabilityTXChecksumOffload
	return &tunLink{
		Endpoint: ep,
		f:        os.NewFile(uintptr(own), "tun"),
		ended:    ended,
		q:        make(chan *stack.PacketBuffer, writeQueue),
		done:     make(chan struct{}),
	}, nil
}

// WritePackets queues the stack's packets for the writer, waiting for
// room. It implements stack.LinkEndpoint in place of the channel
// endpoint's, which drops what its full queue refuses. After close a
// packet is refused.
func (l *tunLink) WritePackets(pkts stack.PacketBufferList) (int, tcpip.Error) {
	n := 0
	for _, pkt := range pkts.AsSlice() {
		select {
		case <-l.done:
		default:
			pkt.IncRef()
			select {
			case l.q <- pkt:
				n++
				continue
			case <-l.done:
				pkt.DecRef()
			}
		}
		break
	}
	select {
	case <-l.done:
		l.drain() // a packet queued as close drained: nobody will send it
	default:
	}
	if n == 0 && pkts.Len() > 0 {
		return 0, &tcpip.ErrClosedForSend{}
	}
	return n, nil
}

// drain frees what is queued.
func (l *tunLink) drain() {
	for {
		select {
		case p := <-l.q:
			p.DecRef()
		default:
			return
		}
	}
}

// Close implements stack.LinkEndpoint. It does nothing: the stack calls it
// as it is destroyed, before the writer has sent the resets of its
// teardown. close, below, ends the link.
func (l *tunLink) Close() {}

// start starts reading and writing the fd. The stack must be ready for
// what is read: the SYN that started the helper is already waiting.
func (l *tunLink) start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	rctx, rcancel := context.WithCancel(context.Background())
	wctx, wcancel := context.WithCancel(context.Background())
	l.stopRead, l.stopWrite = rcancel, wcancel
	l.started = true
	l.reading.Add(1)
	l.writing.Add(1)
	go l.read(rctx)
	go l.write(wctx)
}

// haltReading stops the reader and waits for it: nothing more the jail
// sends reaches the stack. The writer goes on, so that the resets of the
// stack's teardown reach the jail.
func (l *tunLink) haltReading() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.started {
		return
	}
	l.stopRead()
	// A read blocked in the poller returns at once.
	l.f.SetReadDeadline(time.Unix(1, 0))
	l.reading.Wait()
}

// close stops the reader, lets the writer send what is queued (for at most
// flushTime), and closes the link's copy of the fd; a packet queued after
// it is lost. Safe to call before start, and more than once.
func (l *tunLink) close() {
	l.closeOnce.Do(func() {
		l.haltReading()
		l.mu.Lock()
		if l.started {
			l.stopWrite()
			l.f.SetWriteDeadline(time.Now().Add(flushTime))
			l.writing.Wait()
		}
		l.mu.Unlock()
		close(l.done)
		l.drain()
		l.f.Close()
	})
}
