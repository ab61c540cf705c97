// The policy: which destinations the jail may reach, and at which addresses.

package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// errDenied is a refusal, with the reason the record gives.
type errDenied struct{ reason string }

func (e *errDenied) Error() string { return e.reason }

// dial checks host:port against the policy and connects to an address it
// allows; t is the destination as the record and the later checks (SNI,
// Host) name it: a fake address's name, else host as given. A refusal is
// recorded. Every way out of the jail (the transparent stack, the HTTP and
// SOCKS proxies) comes through here, so they refuse in the same words.
func (p *proxy) dial(host string, port uint16) (c net.Conn, t target, err error) {
	t, addrs, err := p.permit(host, port)
	if err != nil {
		p.deny(kindTCP, t, err.Error())
		return nil, t, &errDenied{err.Error()}
	}
	var last error
	for _, a := range addrs {
		c, err := p.dialer.Dial("tcp", netip.AddrPortFrom(a, port).String())
		if err == nil {
			return c, t, nil
		}
		last = err
	}
	return nil, t, last
}

// The refusals an --allow would lift: refusedLine names the flag for them.
var (
	errNotListed   = errors.New("not on the allowlist")
	errIPNotListed = errors.New("IP address not on the allowlist")
)

// Why a listed name has no address the jail may reach.
var (
	errNoSuchName = errors.New("does not resolve")
	errInternal   = errors.New("resolves only to loopback, link-local or private addresses")
	// errResolver is the host's resolver failing (a timeout, SERVFAIL),
	// not saying the name does not exist: the resolver answers SERVFAIL,
	// so the program may retry.
	errResolver = errors.New("the host's resolver failed")
	errBadPin   = errors.New("bad pin")
	// errNotGiven: a fake address the resolver never handed out (from an
	// earlier run's cache, or a guess).
	errNotGiven = errors.New("an address the jail's resolver did not give")
)

// permit says which addresses host:port may be reached at, and the
// destination as the record names it.
func (p *proxy) permit(host string, port uint16) (target, []netip.Addr, error) {
	host = normal(host)
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		t := target{host, port}
		if !p.listed(host, false, port) {
			return t, nil, errNotListed
		}
		addrs, pinned, err := p.vet(host)
		if err != nil {
			return t, nil, err
		}
		return p.forPort(t, addrs, pinned)
	}
	ip = ip.Unmap()
	if isFake(ip) {
		// A program that resolved through the jail's resolver: the
		// name it asked for is the destination, and the addresses
		// vetted then are where it goes (no second lookup to rebind).
		e, ok := p.names.lookup(ip)
		if !ok {
			return target{ip.String(), port}, nil, errNotGiven
		}
		t := target{e.name, port}
		if !p.listed(e.name, false, port) {
			return t, nil, errNotListed
		}
		return p.forPort(t, e.addrs, e.pinned)
	}
	t := target{ip.String(), port}
	if !p.listed(ip.String(), true, port) {
		return t, nil, errIPNotListed
	}
	return t, []netip.Addr{ip}, nil
}

// named is host:port as the record names it, where no policy decides:
// a fake address's name, else the address or name as given.
func (p *proxy) named(host string, port uint16) target {
	host = normal(host)
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return target{host, port}
	}
	if e, ok := p.names.lookup(ip); ok {
		return target{e.name, port}
	}
	return target{ip.Unmap().String(), port}
}

// forPort is the vetted addresses of t's name a connection to t's port
// may use: an internal one only when pinned or named for that port.
func (p *proxy) forPort(t target, addrs []netip.Addr, pinned bool) (target, []netip.Addr, error) {
	if pinned {
		return t, addrs, nil
	}
	var ok []netip.Addr
	for _, a := range addrs {
		if !p.internal(a) || p.listed(a.String(), true, t.Port) {
			ok = append(ok, a)
		}
	}
	if len(ok) == 0 {
		return t, nil, errInternal
	}
	return t, ok, nil
}

// maxAddrs bounds the addresses kept for a name: the first few are
// enough to connect, and the pool holds up to maxNames of them.
const maxAddrs = 16

// vet resolves a listed name as a connection to it may use: its pin, or
// the host's resolver (10 s), dropping internal addresses no IP entry
// names (for some port: forPort checks the one asked for). Its errors
// are the record's reasons.
func (p *proxy) vet(name string) (addrs []netip.Addr, pinned bool, err error) {
	if pin, ok := p.cfg.Hosts[name]; ok {
		ip, err := netip.ParseAddr(pin)
		if err != nil {
			return nil, false, errBadPin
		}
		return []netip.Addr{ip.Unmap()}, true, nil
	}
	r := p.cfg.resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Fully qualified: no search domain of the host's is tried after it.
	ips, err := r.LookupNetIP(ctx, "ip", name+".")
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return nil, false, errNoSuchName
		}
		return nil, false, errResolver
	}
	for _, ip := range ips {
		ip = ip.Unmap()
		if p.internal(ip) && !p.listedAnyPort(ip.String(), true) {
			continue
		}
		if len(addrs) < maxAddrs {
			addrs = append(addrs, ip)
		}
	}
	if len(addrs) == 0 {
		return nil, false, errInternal
	}
	return addrs, false, nil
}

// listed reports whether an allow entry names host (an IP when ip) and
// port; an entry without a port allows 80 and 443.
func (p *proxy) listed(host string, ip bool, port uint16) bool {
	for _, a := range p.cfg.Allow {
		if a.Port == 0 && port != 80 && port != 443 || a.Port != 0 && a.Port != port {
			continue
		}
		if a.names(host, ip) {
			return true
		}
	}
	return false
}

// listedAnyPort reports whether an allow entry names host, for any port:
// the resolver answers for such a name, and the port is checked when the
// jail connects.
func (p *proxy) listedAnyPort(host string, ip bool) bool {
	for _, a := range p.cfg.Allow {
		if a.names(host, ip) {
			return true
		}
	}
	return false
}

// names reports whether the entry is for host (an IP when ip).
func (a Allow) names(host string, ip bool) bool {
	return a.IP == ip && (!a.Wildcard && a.Host == host || a.Wildcard && strings.HasSuffix(host, "."+a.Host))
}

// normal is a host name as the policy and the record see it.
func normal(host string) string {
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// special are the ranges that are not the public internet, beyond what
// netip's predicates know; an address in them is internal.
var special = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relays
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"), // discard
	netip.MustParsePrefix("2001::/23"),
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("3fff::/20"),       // documentation (RFC 9637)
	netip.MustParsePrefix("fec0::/10"),       // site-local
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated
}

// internal is whether ip is refused unless pinned or named: an internal
// address, or one of the host's own (which may look public, and may serve
// what listens on the host only).
func (p *proxy) internal(ip netip.Addr) bool {
	ip = ip.Unmap()
	if v4, ok := embedded(ip); ok && p.local[v4] {
		return true
	}
	return internal(ip) || p.local[ip]
}

// embedded is the IPv4 address an IPv6 one carries (NAT64, IPv4-compatible,
// 6to4), which is where a connection to it may end up.
func embedded(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	b := ip.As16()
	var v4 [4]byte
	switch {
	case netip.MustParsePrefix("64:ff9b::/96").Contains(ip), netip.MustParsePrefix("::/96").Contains(ip):
		copy(v4[:], b[12:])
	case netip.MustParsePrefix("2002::/16").Contains(ip):
		copy(v4[:], b[2:6])
	default:
		return netip.Addr{}, false
	}
	return netip.AddrFrom4(v4), true
}

// hostAddrs is the addresses of the host's interfaces, in the namespace
// the helper starts in: the host's.
func hostAddrs() (map[netip.Addr]bool, error) {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("the host's addresses: %w", err)
	}
	local := map[netip.Addr]bool{}
	for _, a := range as {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				local[ip.Unmap()] = true
			}
		}
	}
	return local, nil
}

// internal addresses are refused unless named: anything but public
// unicast (loopback, the cloud metadata service 169.254.169.254, private
// and special ranges), also when embedded in IPv6 (NAT64, 6to4,
// IPv4-compatible).
func internal(ip netip.Addr) bool {
	ip = ip.Unmap()
	if v4, ok := embedded(ip); ok {
		return internal(v4)
	}
	if !ip.IsGlobalUnicast() || ip.IsPrivate() || ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return true
	}
	for _, p := range special {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
