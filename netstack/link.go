// The link: the jail's TUN device (IFF_TUN|IFF_NO_PI|IFF_VNET_HDR) between
// the jail's kernel and gVisor's stack, in two goroutines: one reads what
// the jail sends and runs it through the stack; one writes what the stack
// sends, so that the jail's kernel receiving it (which happens inside the
// write) overlaps the stack making the next segment.

package netstack

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/link/channel"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// vnetHdrLen is struct virtio_net_hdr's size, which the kernel puts
// before each packet of an IFF_VNET_HDR device (TUNSETVNETHDRSZ unset).
const vnetHdrLen = 10

// vnetNeedsCsum is VIRTIO_NET_HDR_F_NEEDS_CSUM: the packet's transport
// checksum is left for "hardware" to finish (the kernel's
// CHECKSUM_PARTIAL). The stack leaves TCP checksums out (the link claims
// TX checksum offload), and the jail's kernel, delivering such a segment
// locally, takes it as checked instead of summing 64 KiB of it: two passes
// over every byte saved. Nothing in the jail finishes the sum: it has no
// other device to forward to, and no capability to add one.
const vnetNeedsCsum = 1

// tcpChecksumOffset is where the checksum is in a TCP header.
const tcpChecksumOffset = 16

// writeQueue is how many packets the stack may have waiting for the
// writer; past it a packet is dropped and TCP sends it again. Each holds
// only references into a TCP send buffer, which MaxConns and BufMax bound.
const writeQueue = 1024

// tunLink is the stack's link endpoint on the TUN fd: gVisor's channel
// endpoint, with a reader and a writer of the fd around it.
type tunLink struct {
	*channel.Endpoint
	f     *os.File // a copy of the fd, in Go's poller: a read can be stopped
	ended func(error)

	mu        sync.Mutex
	started   bool
	stopRead  context.CancelFunc
	stopWrite context.CancelFunc
	reading   sync.WaitGroup
	writing   sync.WaitGroup
}

// newLink wraps a copy of the TUN fd, made non-blocking, so that the
// caller keeps fd (and closes it) whatever happens here; ended is called
// when reading fails (the device went away).
func newLink(fd int, mtu uint32, ended func(error)) (*tunLink, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, fmt.Errorf("netstack: the TUN fd: %w", err)
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
	f := os.NewFile(uintptr(own), "tun")
	ep := channel.New(writeQueue, mtu, "")
	// RX: the jail's kernel wrote the packet, with a checksum or (under
	// TUN_F_CSUM) a partial one to be finished by hardware that does not
	// exist; the stack must not check it. TX: vnetDataValid, above.
	ep.LinkEPCapabilities = stack.CapabilityRXChecksumOffload | stack.CapabilityTXChecksumOffload
	return &tunLink{Endpoint: ep, f: f, ended: ended}, nil
}

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
// stack's shutdown reach the jail.
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

// close stops the reader, lets the writer send what is queued, and
// closes the link's copy of the fd. Safe to call before start.
func (l *tunLink) close() {
	l.haltReading()
	l.mu.Lock()
	if l.started {
		l.stopWrite()
		l.writing.Wait()
		l.started = false
	}
	l.mu.Unlock()
	l.Endpoint.Close()
	l.f.Close()
}

// read delivers each packet the jail sends into the stack, in this
// goroutine: one packet at a time, so a jail writing faster than the
// stack works leaves the backlog in the TUN's own queue (500 packets),
// where the kernel drops what does not fit, not in the helper's memory.
func (l *tunLink) read(ctx context.Context) {
	defer l.reading.Done()
	buf := make([]byte, vnetHdrLen+header.IPv6MaximumPayloadSize+header.IPv6MinimumSize)
	for {
		n, err := l.f.Read(buf)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				continue
			}
			l.ended(fmt.Errorf("reading the TUN: %w", err))
			return
		}
		if n <= vnetHdrLen {
			continue
		}
		// The header says only how the kernel summed the packet, which
		// the stack does not check: skipped.
		pkt := buf[vnetHdrLen:n]
		var proto tcpip.NetworkProtocolNumber
		switch header.IPVersion(pkt) {
		case header.IPv4Version:
			proto = header.IPv4ProtocolNumber
		case header.IPv6Version:
			proto = header.IPv6ProtocolNumber
		default:
			continue
		}
		// Copied out of buf into a view of its own size: most of what
		// the jail sends is acknowledgements of a few dozen bytes.
		p := stack.NewPacketBuffer(stack.PacketBufferOptions{
			Payload: buffer.MakeWithData(pkt),
		})
		l.InjectInbound(proto, p)
		p.DecRef()
	}
}

// write sends each packet the stack queued to the jail, behind its
// virtio header. Once stopped it sends what is still queued, and returns.
func (l *tunLink) write(ctx context.Context) {
	defer l.writing.Done()
	rc, err := l.f.SyscallConn()
	if err != nil {
		l.ended(fmt.Errorf("the TUN's fd: %w", err))
		return
	}
	var hdr [vnetHdrLen]byte
	iov := make([][]byte, 0, 8)
	for {
		pkt := l.ReadContext(ctx)
		if pkt == nil {
			pkt = l.Read() // stopped: what is left, without waiting
		}
		if pkt == nil {
			return
		}
		vnetHeader(&hdr, pkt)
		iov = append(iov[:0], hdr[:])
		iov = append(iov, pkt.AsSlices()...)
		err := rc.Write(func(fd uintptr) bool {
			_, err := unix.Writev(int(fd), iov)
			return err != unix.EAGAIN
		})
		pkt.DecRef()
		if errors.Is(err, os.ErrClosed) {
			return
		}
		// Any other failure loses the packet, as a wire would, and TCP
		// sends it again: a device that is gone fails the reader, which
		// ends the stack.
	}
}

// vnetHeader fills h (struct virtio_net_hdr, in the kernel's byte order)
// for pkt: a TCP segment's checksum is the kernel's to finish, from the
// end of the IP header; anything else (ICMP) was summed by the stack.
func vnetHeader(h *[vnetHdrLen]byte, pkt *stack.PacketBuffer) {
	*h = [vnetHdrLen]byte{}
	if pkt.TransportProtocolNumber != header.TCPProtocolNumber {
		return
	}
	ip := len(pkt.NetworkHeader().Slice())
	h[0] = vnetNeedsCsum
	binary.NativeEndian.PutUint16(h[2:], uint16(ip+len(pkt.TransportHeader().Slice()))) // hdr_len
	binary.NativeEndian.PutUint16(h[6:], uint16(ip))                                    // csum_start
	binary.NativeEndian.PutUint16(h[8:], tcpChecksumOffset)                             // csum_offset
}
