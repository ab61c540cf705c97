// What a tap read names: the destination of the packet the kernel
// refused before the jail's device existed.

package proxy

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"
)

// pktinfo is an IPV6_PKTINFO control message naming dst, as the kernel
// writes it: a cmsghdr (its length the size of the platform's word),
// then struct in6_pktinfo's address.
func pktinfo(dst netip.Addr) []byte {
	b := make([]byte, unix.CmsgSpace(20))
	word := unix.SizeofCmsghdr - 8
	if word == 8 {
		binary.NativeEndian.PutUint64(b, uint64(unix.CmsgLen(20)))
	} else {
		binary.NativeEndian.PutUint32(b, uint32(unix.CmsgLen(20)))
	}
	binary.NativeEndian.PutUint32(b[word:], unix.IPPROTO_IPV6)
	binary.NativeEndian.PutUint32(b[word+4:], unix.IPV6_PKTINFO)
	a := dst.As16()
	copy(b[unix.CmsgLen(0):], a[:])
	return b
}

func TestTapDest(t *testing.T) {
	// An IPv4 SYN to 93.184.216.9:443, with and without 4 bytes of
	// options in its IP header.
	v4 := []byte{0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0, 93, 184, 216, 9, 93, 184, 216, 9, 0xc0, 0x01, 0x01, 0xbb}
	v4opts := append(append([]byte{0x46}, v4[1:20]...), append([]byte{1, 1, 1, 0}, v4[20:]...)...)
	tcp6 := []byte{0xc0, 0x01, 0x00, 0x35, 0, 0, 0, 0}
	v6 := netip.MustParseAddr("2001:db8::1")
	for _, c := range []struct {
		name string
		b    []byte
		oob  []byte
		v6   bool
		want string
	}{
		{"v4", v4, nil, false, "93.184.216.9:443"},
		{"v4 with IP options", v4opts, nil, false, "93.184.216.9:443"},
		{"v4 cut in its IP header", v4[:19], nil, false, ""},
		{"v4 with no port", v4[:21], nil, false, ""},
		{"not v4", append([]byte{0x65}, v4[1:]...), nil, false, ""},
		{"v6", tcp6, pktinfo(v6), true, "[2001:db8::1]:53"},
		{"v6 with no pktinfo", tcp6, nil, true, ""},
		{"v6 with no port", tcp6[:3], pktinfo(v6), true, ""},
	} {
		got, ok := tapDest(c.b, c.oob, c.v6)
		if s := got.String(); ok != (c.want != "") || ok && s != c.want {
			t.Errorf("%s: %v %v, want %q", c.name, s, ok, c.want)
		}
	}
}
