// The jail's resolver, over real UDP and TCP sockets on the host's
// loopback, with a host resolver the tests run.

package proxy

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

func allowlistConfig(r *net.Resolver) Config {
	return Config{Mode: "allowlist", Profile: "agent", resolver: r,
		Allow: []Allow{{Host: "api.test"}, {Host: "x.test", Wildcard: true}, {Host: "ssh.test", Port: 22},
			{Host: "10.1.2.3", IP: true, Port: 8080}},
		Hosts: map[string]string{"api.test": "127.0.0.1"}}
}

// TestResolverAllowed: a listed name (exact, wildcard, any port) gets its
// fake address for A and its v6 twin for AAAA, over UDP and TCP, and the
// pool keeps what was vetted; other types get no data.
func TestResolverAllowed(t *testing.T) {
	p, rr := newTestProxy(t, allowlistConfig(hostResolver(t)))
	udp, tcp := serveResolver(t, p)
	for _, network := range []string{"udp", "tcp"} {
		for name, want := range map[string]string{"api.test.": "127.0.0.1", "A.X.Test.": "93.184.216.34", "ssh.test.": "93.184.216.34"} {
			addr := map[string]string{"udp": udp, "tcp": tcp}[network]
			a := ask(t, network, addr, name, dnsmessage.TypeA)
			if a.h.RCode != dnsmessage.RCodeSuccess || a.h.ID != 0x1234 || !a.h.Response || len(a.addrs) != 1 || !fakeV4.Contains(a.addrs[0]) || a.ttl != answerTTL {
				t.Fatalf("%s A %s: %+v", network, name, a)
			}
			e, ok := p.names.lookup(a.addrs[0])
			if !ok || e.name != normal(name) || len(e.addrs) != 1 || e.addrs[0].String() != want {
				t.Errorf("%s: the pool has %+v", name, e)
			}
			six := ask(t, network, addr, name, dnsmessage.TypeAAAA)
			if six.h.RCode != dnsmessage.RCodeSuccess || len(six.addrs) != 1 || six.addrs[0] != twin(a.addrs[0]) {
				t.Errorf("%s AAAA %s: %+v, want %s", network, name, six, twin(a.addrs[0]))
			}
			mx := ask(t, network, addr, name, dnsmessage.TypeMX)
			if mx.h.RCode != dnsmessage.RCodeSuccess || len(mx.addrs) != 0 || mx.h.Authoritative {
				t.Errorf("%s MX %s: %+v, want no data", network, name, mx)
			}
		}
	}
	// As a program in the jail asks: Go's own resolver, the answer's
	// question echoed as asked.
	r := resolverAt(udp)
	ips, err := r.LookupNetIP(context.Background(), "ip4", "deep.a.x.test")
	if err != nil || len(ips) != 1 || !fakeV4.Contains(ips[0]) {
		t.Errorf("Go's resolver: %v, %v", ips, err)
	}
	if l := rr.refused(t); len(l) != 0 {
		t.Errorf("refusal lines for allowed names: %q", l)
	}
}

// TestResolverRefused: an unlisted name, one that does not exist on the
// host, one that resolves only to loopback, and one the host's resolver
// fails on are each refused as the brief says, recorded and said once.
func TestResolverRefused(t *testing.T) {
	p, rr := newTestProxy(t, allowlistConfig(hostResolver(t)))
	udp, tcp := serveResolver(t, p)
	for _, tc := range []struct {
		name  string
		rcode dnsmessage.RCode
	}{
		{"npm.test.", dnsmessage.RCodeNameError},
		{"gone.x.test.", dnsmessage.RCodeNameError},
		{"loop.x.test.", dnsmessage.RCodeNameError},
		{"broken.x.test.", dnsmessage.RCodeServerFailure},
		{"4.3.2.1.in-addr.arpa.", dnsmessage.RCodeNameError},
	} {
		for _, typ := range []dnsmessage.Type{dnsmessage.TypeA, dnsmessage.TypeAAAA} {
			for _, at := range [][2]string{{"udp", udp}, {"tcp", tcp}} {
				if a := ask(t, at[0], at[1], tc.name, typ); a.h.RCode != tc.rcode || len(a.addrs) != 0 {
					t.Errorf("%s %v %s: %v %v, want %v", at[0], typ, tc.name, a.h.RCode, a.addrs, tc.rcode)
				}
			}
		}
	}
	// An internal address an IP entry names (for some port) is kept.
	if a := ask(t, "udp", udp, "private.x.test.", dnsmessage.TypeA); a.h.RCode != dnsmessage.RCodeSuccess || len(a.addrs) != 1 {
		t.Errorf("private.x.test (10.1.2.3 listed): %+v", a)
	}
	wantLines := []string{
		"network: refused lookup of npm.test (not on the allowlist of profile agent; allow it with --allow npm.test)",
		"network: refused lookup of gone.x.test (does not resolve)",
		"network: refused lookup of loop.x.test (resolves only to loopback, link-local or private addresses)",
		"network: refused lookup of broken.x.test (the host's resolver failed)",
		"network: refused lookup of 4.3.2.1.in-addr.arpa (not on the allowlist)",
	}
	if got := rr.refused(t); !slices.Equal(got, wantLines) {
		t.Errorf("refusal lines:\n %q\nwant\n %q", got, wantLines)
	}
	denied, _ := record(t, p, rr)
	want := []HostDenial{
		{"4.3.2.1.in-addr.arpa", 0, 4, "not on the allowlist", "lookup"},
		{"broken.x.test", 0, 4, "the host's resolver failed", "lookup"},
		{"gone.x.test", 0, 4, "does not resolve", "lookup"},
		{"loop.x.test", 0, 4, "resolves only to loopback, link-local or private addresses", "lookup"},
		{"npm.test", 0, 4, "not on the allowlist", "lookup"},
	}
	if !slices.Equal(denied, want) {
		t.Errorf("record:\n %+v\nwant\n %+v", denied, want)
	}
}

// TestResolverDeadUpstream: with the host's resolver gone, a listed name
// gets SERVFAIL (the program may retry), and the record says why.
func TestResolverDeadUpstream(t *testing.T) {
	p, rr := newTestProxy(t, allowlistConfig(deadResolver(t)))
	udp, _ := serveResolver(t, p)
	start := time.Now()
	if a := ask(t, "udp", udp, "a.x.test.", dnsmessage.TypeA); a.h.RCode != dnsmessage.RCodeServerFailure {
		t.Errorf("a.x.test with a dead upstream: %v", a.h.RCode)
	}
	t.Logf("SERVFAIL in %v", time.Since(start))
	// A pinned name needs no upstream.
	if a := ask(t, "udp", udp, "api.test.", dnsmessage.TypeA); a.h.RCode != dnsmessage.RCodeSuccess {
		t.Errorf("pinned api.test with a dead upstream: %v", a.h.RCode)
	}
	denied, _ := record(t, p, rr)
	if want := []HostDenial{{"a.x.test", 0, 1, "the host's resolver failed", "lookup"}}; !slices.Equal(denied, want) {
		t.Errorf("record: %+v, want %+v", denied, want)
	}
}

// TestResolverNone: in mode "none" every name is refused, even a pinned
// one, with the line that says the network is off.
func TestResolverNone(t *testing.T) {
	p, rr := newTestProxy(t, Config{Mode: "none", Profile: "agent", Hosts: map[string]string{"api.test": "127.0.0.1"}, resolver: deadResolver(t)})
	udp, tcp := serveResolver(t, p)
	for _, name := range []string{"example.com.", "Example.COM.", "api.test."} {
		for _, at := range [][2]string{{"udp", udp}, {"tcp", tcp}} {
			if a := ask(t, at[0], at[1], name, dnsmessage.TypeA); a.h.RCode != dnsmessage.RCodeNameError {
				t.Errorf("none mode, %s %s: %v", at[0], name, a.h.RCode)
			}
		}
	}
	want := []string{
		"network is off in this jail; refused lookup of example.com (allow it with --allow example.com)",
		"network is off in this jail; refused lookup of api.test (allow it with --allow api.test)",
	}
	if got := rr.refused(t); !slices.Equal(got, want) {
		t.Errorf("lines:\n %q\nwant\n %q", got, want)
	}
	denied, _ := record(t, p, rr)
	if w := []HostDenial{{"api.test", 0, 2, reasonOff, "lookup"}, {"example.com", 0, 4, reasonOff, "lookup"}}; !slices.Equal(denied, w) {
		t.Errorf("record: %+v, want %+v", denied, w)
	}
}

// TestResolverMalformed: an oversize query (UDP and TCP), a name longer
// than DNS allows, two questions, a response, garbage: FORMERR where there
// is an ID to answer, nothing otherwise, and the resolver serves on.
func TestResolverMalformed(t *testing.T) {
	p, rr := newTestProxy(t, allowlistConfig(hostResolver(t)))
	udp, tcp := serveResolver(t, p)
	big := query(t, 7, "api.test.", dnsmessage.TypeA)
	big = append(big, make([]byte, 10<<10)...) // 10 kB
	for _, at := range [][2]string{{"udp", udp}, {"tcp", tcp}} {
		a := parseAnswer(t, exchange(t, at[0], at[1], big))
		if a.h.RCode != dnsmessage.RCodeFormatError || a.h.ID != 7 {
			t.Errorf("%s, a 10 kB query: %+v", at[0], a.h)
		}
	}
	// 254 bytes of name, by hand (dnsmessage builds none so long).
	long := []byte{0, 9, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0}
	for i := 0; i < 4; i++ {
		long = append(long, 63)
		long = append(long, make([]byte, 63)...)
		for j := len(long) - 63; j < len(long); j++ {
			long[j] = 'a'
		}
	}
	long = append(long, 0, 0, 1, 0, 1)
	if a := parseAnswer(t, exchange(t, "udp", udp, long)); a.h.RCode != dnsmessage.RCodeFormatError || a.h.ID != 9 {
		t.Errorf("a 255-byte name: %+v", a.h)
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 11})
	b.StartQuestions()
	b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName("api.test."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
	b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName("npm.test."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
	two, _ := b.Finish()
	if a := parseAnswer(t, exchange(t, "udp", udp, two)); a.h.RCode != dnsmessage.RCodeFormatError || a.h.ID != 11 {
		t.Errorf("two questions: %+v", a.h)
	}
	// A response, or garbage, gets no answer: the next query does.
	c, err := net.Dial("udp", udp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp := query(t, 12, "api.test.", dnsmessage.TypeA)
	resp[2] |= 0x80
	c.Write(resp)
	c.Write([]byte{1, 2, 3})
	c.Write(query(t, 13, "api.test.", dnsmessage.TypeA))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 1500)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if a := parseAnswer(t, buf[:n]); a.h.ID != 13 {
		t.Errorf("the first answer after a response and garbage is to %d", a.h.ID)
	}
	if l := rr.refused(t); len(l) != 0 {
		t.Errorf("malformed queries said: %q", l)
	}
}

// TestResolverTCPBound: past maxDNSConn connections at once, the next is
// closed at once; the ones held still answer.
func TestResolverTCPBound(t *testing.T) {
	p, _ := newTestProxy(t, allowlistConfig(hostResolver(t)))
	_, tcp := serveResolver(t, p)
	var held []net.Conn
	for i := 0; i < maxDNSConn; i++ {
		c, err := net.Dial("tcp", tcp)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	// Each held connection is accepted: one query through each.
	for i, c := range held {
		q := query(t, uint16(i), "api.test.", dnsmessage.TypeA)
		c.Write(binary.BigEndian.AppendUint16(nil, uint16(len(q))))
		c.Write(q)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var l [2]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			t.Fatalf("held connection %d: %v", i, err)
		}
		io.ReadFull(c, make([]byte, binary.BigEndian.Uint16(l[:])))
	}
	extra, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	extra.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := extra.Read(make([]byte, 1)); err == nil {
		t.Errorf("connection %d: read %d bytes, want it closed", maxDNSConn+1, n)
	}
}

// TestResolverManyNames: 5000 distinct allowed names and 5000 refused ones
// keep the pool, the record and the lines within their bounds; the names
// past the pool's get SERVFAIL.
func TestResolverManyNames(t *testing.T) {
	p, rr := newTestProxy(t, allowlistConfig(hostResolver(t)))
	udp, _ := serveResolver(t, p)
	const n = 5000
	codes := make([]dnsmessage.RCode, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				a, err := askErr("udp", udp, fmt.Sprintf("h%d.x.test.", i), dnsmessage.TypeA)
				if err != nil {
					t.Error(err)
				}
				codes[i] = a.h.RCode
				if _, err := askErr("udp", udp, fmt.Sprintf("u%d.npm.test.", i), dnsmessage.TypeA); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	t.Logf("%d queries in %v", 2*n, time.Since(start))
	ok, servfail := 0, 0
	for _, c := range codes {
		switch c {
		case dnsmessage.RCodeSuccess:
			ok++
		case dnsmessage.RCodeServerFailure:
			servfail++
		}
	}
	if ok != maxNames || servfail != n-maxNames || p.names.len() != maxNames {
		t.Errorf("%d answered, %d SERVFAIL, %d names in the pool; want %d, %d, %d", ok, servfail, p.names.len(), maxNames, n-maxNames, maxNames)
	}
	lines := rr.refused(t)
	denied, _ := record(t, p, rr)
	if len(lines) > maxEntries || len(denied) > maxEntries+3 {
		t.Errorf("%d refusal lines, %d record entries: want at most %d", len(lines), len(denied), maxEntries)
	}
	others := 0
	for _, d := range denied {
		if d.Host == "(others)" {
			others += d.Count
		}
	}
	if others != 2*n-maxNames-maxEntries {
		t.Errorf("(others) counts %d refusals, want %d", others, 2*n-maxNames-maxEntries)
	}
	// A name the pool holds still resolves, to the same address.
	a1 := ask(t, "udp", udp, "h1.x.test.", dnsmessage.TypeA)
	if a1.h.RCode != dnsmessage.RCodeSuccess {
		t.Errorf("h1.x.test after the flood: %v", a1.h.RCode)
	}
}

// TestHostAddrs: a listed name that resolves to one of the host's own
// addresses is refused as an internal one, unless pinned or named; the
// helper's list of them has this machine's.
func TestHostAddrs(t *testing.T) {
	local, err := hostAddrs()
	if err != nil {
		t.Fatal(err)
	}
	if !local[netip.MustParseAddr("127.0.0.1")] {
		t.Errorf("the host's addresses %v lack 127.0.0.1", local)
	}
	// This machine's addresses are likely internal anyway: the test
	// resolver's public one stands for one that is not.
	self := netip.MustParseAddr("93.184.216.34")
	local[self] = true
	p, rr := newTestProxy(t, Config{Mode: "allowlist", resolver: hostResolver(t), Allow: []Allow{{Host: "api.test"}, {Host: "pinned.test"}},
		Hosts: map[string]string{"pinned.test": "93.184.216.34"}})
	p.local = local
	udp, _ := serveResolver(t, p)
	if a := ask(t, "udp", udp, "api.test.", dnsmessage.TypeA); a.h.RCode != dnsmessage.RCodeNameError {
		t.Errorf("api.test, at the host's address: %+v", a)
	}
	want := []string{"network: refused lookup of api.test (resolves only to loopback, link-local or private addresses)"}
	if got := rr.refused(t); !slices.Equal(got, want) {
		t.Errorf("lines: %q, want %q", got, want)
	}
	if _, _, err := p.permit("api.test", 443); err != errInternal {
		t.Errorf("api.test:443, at the host's address: %v, want %v", err, errInternal)
	}
	// Inside an IPv6 address that carries it (NAT64, 6to4), too.
	for _, s := range []string{"64:ff9b::5db8:d822", "2002:5db8:d822::1"} {
		if !p.internal(netip.MustParseAddr(s)) {
			t.Errorf("%s, the host's address embedded: not internal", s)
		}
	}
	if _, addrs, err := p.permit("pinned.test", 443); err != nil || !slices.Equal(addrs, []netip.Addr{self}) {
		t.Errorf("pinned.test: %v %v", addrs, err)
	}
	// Named for one port: reached there only.
	p, _ = newTestProxy(t, Config{Mode: "allowlist", resolver: hostResolver(t), Allow: []Allow{{Host: "named.test"},
		{Host: "named.test", Port: 8080}, {Host: "93.184.216.34", IP: true, Port: 8080}}})
	p.local = local
	fake, err := p.fakeAddr("named.test")
	if err != nil {
		t.Fatalf("named.test (its address named for 8080): %v", err)
	}
	if _, _, err := p.permit(fake.String(), 8080); err != nil {
		t.Errorf("named.test:8080: %v", err)
	}
	if _, _, err := p.permit(fake.String(), 443); err != errInternal {
		t.Errorf("named.test:443: %v, want %v", err, errInternal)
	}
}
