// The link's reader and writer of the TUN fd, and the virtio header each
// packet crosses it behind.

package netstack

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
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

// maxIovecs is writev's limit (IOV_MAX). gVisor's TCP merges small queued
// segments into one without copying, so a segment can be thousands of
// pieces: such a packet is copied into one buffer first.
const maxIovecs = 1024

// maxPacket is the largest packet the device can carry: its MTU is at
// most 65535, and no segmentation offload is asked for.
const maxPacket = 65535

// read delivers each packet the jail sends into the stack, in this
// goroutine: one packet at a time, so a jail writing faster than the
// stack works leaves the backlog in the TUN's own queue (500 packets),
// where the kernel drops what does not fit, not in the helper's memory.
func (l *tunLink) read(ctx context.Context) {
	defer l.reading.Done()
	buf := make([]byte, vnetHdrLen+maxPacket)
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
		l.ended(fmt.Errorf("the TUN fd: %w", err))
		return
	}
	w := packetWriter{rc: rc}
	for {
		var pkt *stack.PacketBuffer
		select {
		case pkt = <-l.q:
		case <-ctx.Done():
			select {
			case pkt = <-l.q: // stopped: what is left, without waiting
			default:
				return
			}
		}
		err := w.write(pkt)
		pkt.DecRef()
		if errors.Is(err, os.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
			return
		}
		if err != nil {
			// Lost, as on a wire, and TCP sends it again: a device that
			// is gone fails the reader, which ends the stack.
			l.writeErrors.Add(1)
		}
	}
}

// packetWriter writes packets to the TUN behind their virtio header; its
// buffers are reused from one packet to the next.
type packetWriter struct {
	rc   syscall.RawConn
	hdr  [vnetHdrLen]byte
	iov  [][]byte
	flat []byte // a packet of too many pieces, copied whole
}

// write writes pkt, waiting in Go's poller (under the file's deadline)
// while the device has no room.
func (w *packetWriter) write(pkt *stack.PacketBuffer) error {
	vnetHeader(&w.hdr, pkt)
	w.iov = append(w.iov[:0], w.hdr[:])
	if pieces := pkt.AsSlices(); len(pieces) < maxIovecs {
		w.iov = append(w.iov, pieces...)
	} else {
		w.flat = w.flat[:0]
		for _, p := range pieces {
			w.flat = append(w.flat, p...)
		}
		w.iov = append(w.iov, w.flat)
	}
	var werr error
	if err := w.rc.Write(func(fd uintptr) bool {
		_, werr = unix.Writev(int(fd), w.iov)
		return werr != unix.EAGAIN
	}); err != nil {
		return err
	}
	return werr
}

// vnetHeader fills h (struct virtio_net_hdr, in the kernel's byte order)
// for pkt: a TCP segment's checksum is the kernel's to finish, from the
// end of the IP header; anything else (ICMP) was summed by the stack.
func vnetHeader(h *[vnetHdrLen]byte, pkt *stack.PacketBuffer) {
	*h = [vnetHdrLen]byte{}
	tcp := len(pkt.TransportHeader().Slice())
	if pkt.TransportProtocolNumber != header.TCPProtocolNumber || tcp < header.TCPMinimumSize {
		return
	}
	ip := len(pkt.NetworkHeader().Slice())
	h[0] = vnetNeedsCsum
	binary.NativeEndian.PutUint16(h[2:], uint16(ip+tcp))    // hdr_len
	binary.NativeEndian.PutUint16(h[6:], uint16(ip))        // csum_start
	binary.NativeEndian.PutUint16(h[8:], tcpChecksumOffset) // csum_offset
}
