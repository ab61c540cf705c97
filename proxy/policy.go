// The policy: which destinations the jail may reach, and at which addresses.

package proxy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// errDenied is a refusal, with the reason the record gives.
type errDenied struct{ reason string }

func (e *errDenied) Error() string { return e.reason }

// dial checks host:port against the policy, resolves it, and connects to
// an address the policy allows. A refusal is recorded.
func (p *proxy) dial(host string, port uint16) (net.Conn, error) {
	host = normal(host)
	t := target{host, port}
	addrs, err := p.permit(host, port)
	if err != nil {
		p.deny(t, err.Error())
		return nil, &errDenied{err.Error()}
	}
	var last error
	for _, a := range addrs {
		c, err := p.dialer.Dial("tcp", net.JoinHostPort(a.String(), strconv.Itoa(int(port))))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// The refusals an --allow would lift: refusedLine names the flag for them.
var (
	errNotListed   = errors.New("not on the allowlist")
	errIPNotListed = errors.New("IP address not on the allowlist")
)

// permit says which addresses host:port may be reached at.
func (p *proxy) permit(host string, port uint16) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		ip = ip.Unmap()
		if !p.listed(ip.String(), true, port) {
			return nil, errIPNotListed
		}
		return []netip.Addr{ip}, nil
	}
	if !p.listed(host, false, port) {
		return nil, errNotListed
	}
	if pinned, ok := p.cfg.Hosts[host]; ok {
		ip, err := netip.ParseAddr(pinned)
		if err != nil {
			return nil, errors.New("bad pin")
		}
		return []netip.Addr{ip.Unmap()}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Fully qualified: no search domain of the host's is tried after it.
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host+".")
	if err != nil {
		return nil, errors.New("does not resolve")
	}
	var ok []netip.Addr
	for _, ip := range ips {
		ip = ip.Unmap()
		if internal(ip) && !p.listed(ip.String(), true, port) {
			continue
		}
		ok = append(ok, ip)
	}
	if len(ok) == 0 {
		return nil, errors.New("resolves only to loopback, link-local or private addresses")
	}
	return ok, nil
}

// listed reports whether an allow entry names host (an IP when ip) and
// port; an entry without a port allows 80 and 443.
func (p *proxy) listed(host string, ip bool, port uint16) bool {
	for _, a := range p.cfg.Allow {
		if a.IP != ip {
			continue
		}
		if a.Port == 0 && port != 80 && port != 443 || a.Port != 0 && a.Port != port {
			continue
		}
		if !a.Wildcard && a.Host == host || a.Wildcard && strings.HasSuffix(host, "."+a.Host) {
			return true
		}
	}
	return false
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
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001::/23"),
}

// internal addresses are refused unless named: anything but public
// unicast (loopback, the cloud metadata service 169.254.169.254, private
// and special ranges), also when embedded in IPv6 (NAT64, 6to4,
// IPv4-compatible).
func internal(ip netip.Addr) bool {
	if ip.Is6() {
		b := ip.As16()
		var v4 [4]byte
		switch {
		case netip.MustParsePrefix("64:ff9b::/96").Contains(ip), netip.MustParsePrefix("::/96").Contains(ip):
			copy(v4[:], b[12:])
			return internal(netip.AddrFrom4(v4))
		case netip.MustParsePrefix("2002::/16").Contains(ip):
			copy(v4[:], b[2:6])
			return internal(netip.AddrFrom4(v4))
		}
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
