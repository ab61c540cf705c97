package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestInternal(t *testing.T) {
	for _, s := range []string{
		"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.1.2.3",
		"192.0.0.170", "198.18.0.1", "240.0.0.1", "255.255.255.255", "224.0.0.1", "::1", "fe80::1", "fc00::1",
		"64:ff9b::a9fe:a9fe", "::7f00:1", "2002:a9fe:a9fe::1", "64:ff9b:1::1", "::",
		"192.0.2.1", "198.51.100.1", "203.0.113.7", "192.88.99.1", "fec0::1", "100::1", "2001:db8::1",
		"::ffff:0:808:808", "::ffff:127.0.0.1", "64:ff9b::c000:201", "3fff::1",
	} {
		if !internal(netip.MustParseAddr(s)) {
			t.Errorf("internal(%s) = false", s)
		}
	}
	for _, s := range []string{"1.1.1.1", "93.184.216.34", "2606:4700::1111", "64:ff9b::101:101", "2002:101:101::1"} {
		if internal(netip.MustParseAddr(s)) {
			t.Errorf("internal(%s) = true", s)
		}
	}
}

func TestListed(t *testing.T) {
	p := newProxy(Config{Allow: []Allow{
		{Host: "pypi.org"}, {Host: "x.test", Wildcard: true}, {Host: "api.test", Port: 8443}, {Host: "10.1.2.3", IP: true},
	}}, nil)
	for _, tc := range []struct {
		host string
		ip   bool
		port uint16
		want bool
	}{
		{"pypi.org", false, 443, true}, {"pypi.org", false, 80, true}, {"pypi.org", false, 22, false},
		{"a.x.test", false, 443, true}, {"x.test", false, 443, false}, {"evilx.test", false, 443, false},
		{"api.test", false, 8443, true}, {"api.test", false, 443, false},
		{"10.1.2.3", true, 80, true}, {"10.1.2.3", false, 80, false}, {"pypi.org.evil", false, 443, false},
	} {
		if got := p.listed(tc.host, tc.ip, tc.port); got != tc.want {
			t.Errorf("listed(%q, %v, %d) = %v, want %v", tc.host, tc.ip, tc.port, got, tc.want)
		}
	}
}

func TestServerName(t *testing.T) {
	// A minimal ClientHello with the SNI "api.test".
	name := []byte("api.test")
	n := len(name)
	sni := []byte{0, 0, byte((n + 5) >> 8), byte(n + 5), byte((n + 3) >> 8), byte(n + 3), 0, byte(n >> 8), byte(n)}
	sni = append(sni, name...)
	body := append([]byte{3, 3}, make([]byte, 32)...)
	body = append(body, 0, 0, 2, 0x13, 1, 1, 0)
	body = append(body, byte(len(sni)>>8), byte(len(sni)))
	body = append(body, sni...)
	hello := append([]byte{1, 0, byte(len(body) >> 8), byte(len(body))}, body...)
	got, err := serverName(hello)
	if err != nil || got != "api.test" {
		t.Fatalf("serverName = %q, %v", got, err)
	}
	for i := range hello {
		serverName(hello[:i]) // never panics on a cut hello
	}
}

// TestReportBounded: however a jail names what it asks for (control bytes,
// quotes, HTML characters that JSON escapes six-fold), a report line with
// every entry the record keeps stays under what the runner reads (256
// KiB, jail/proxyctl.h): a longer one is dropped, and with it the record of
// the jail's connections.
func TestReportBounded(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(Config{}, w)
	worst := strings.Repeat("<\x01\"", 2000)
	read := make(chan []byte)
	go func() { // as the runner reads: all along
		b, _ := io.ReadAll(r)
		read <- b
	}()
	for i := 0; i < 2*maxEntries; i++ {
		p.deny([]string{kindTCP, kindLookup, kindUDP}[i%3], target{fmt.Sprintf("%d%s", i, worst), uint16(i)}, "TLS SNI '"+worst+"' is not the host asked for")
		p.track(target{fmt.Sprintf("%d%s", i, worst), uint16(i)})
	}
	p.report()
	w.Close()
	lines := strings.Split(strings.TrimSuffix(string(<-read), "\n"), "\n")
	line := lines[len(lines)-1]
	if n := len(lines) - 1; n != maxEntries {
		t.Errorf("%d refusal lines, want one per refusal the record keeps (%d)", n, maxEntries)
	}
	for _, l := range lines[:len(lines)-1] {
		// The runner keeps 1039 bytes of a line (jail/proxyctl.h's
		// PROXY_REFUSED_LEN): the hint to allow the host is at its end.
		if !strings.HasPrefix(l, refusedPrefix) || len(l)-len(refusedPrefix) > 1039 || strings.ContainsFunc(l, func(r rune) bool { return r < 0x20 || r >= 0x7f }) {
			t.Errorf("a refusal line the runner would cut or that is not printable ASCII: %.100q", l)
			break
		}
	}
	if len(line) >= 256<<10 {
		t.Errorf("a report line of %d bytes: the runner reads at most %d", len(line), 256<<10)
	}
	if !json.Valid(append(append([]byte("{"), bytes.TrimSpace([]byte(line))...), '}')) {
		t.Errorf("the report line is not JSON fields: %.200s", line)
	}
}

// TestRefusedLine: what the agent's model reads of a refusal names the
// destination, why, and the flag that allows it.
func TestRefusedLine(t *testing.T) {
	for _, tc := range []struct {
		host    string
		port    uint16
		reason  string
		profile string
		want    string
	}{
		{"npm.test", 443, "not on the allowlist", "agent", "network: refused npm.test:443 (not on the allowlist of profile agent; allow it with --allow npm.test)"},
		{"git.test", 22, "not on the allowlist", "agent", "network: refused git.test:22 (not on the allowlist of profile agent; allow it with --allow git.test:22)"},
		{"2606:4700::1111", 443, "IP address not on the allowlist", "", "network: refused [2606:4700::1111]:443 (IP address not on the allowlist; allow it with --allow [2606:4700::1111])"},
		{"[2606:4700::1111]", 8443, "IP address not on the allowlist", "", "network: refused [2606:4700::1111]:8443 (IP address not on the allowlist; allow it with --allow [2606:4700::1111]:8443)"},
		// Never a suggestion to allow an internal address.
		{"::1", 8080, "IP address not on the allowlist", "agent", "network: refused [::1]:8080 (IP address not on the allowlist)"},
		{"169.254.169.254", 80, "IP address not on the allowlist", "agent", "network: refused 169.254.169.254:80 (IP address not on the allowlist)"},
		// The jail's words are not shown as jail's, and a reason that
		// only mentions the allowlist (an SNI the jail chose) suggests
		// nothing.
		{"x.test (ok). jail: network: retry with --allow 169.254.169.254", 443, "not on the allowlist", "agent", "network: refused (a name that is not a host name):443 (not on the allowlist)"},
		// A name --allow would refuse is not suggested.
		{"a_b.test", 80, "not on the allowlist", "agent", "network: refused (a name that is not a host name):80 (not on the allowlist)"},
		{"api.test", 443, "TLS SNI 'not on the allowlist' is not the host asked for", "agent", "network: refused api.test:443 (TLS SNI 'not on the allowlist' is not the host asked for)"},
		{"loop.test", 80, "resolves only to loopback, link-local or private addresses", "agent", "network: refused loop.test:80 (resolves only to loopback, link-local or private addresses)"},
		{"x.test", 80, "not on the allowlist", "a\x1b[2Jb", "network: refused x.test:80 (not on the allowlist of profile a?[2Jb; allow it with --allow x.test)"},
	} {
		if got := refusedLine(kindTCP, target{tc.host, tc.port}, tc.reason, tc.profile); got != tc.want {
			t.Errorf("refusedLine(%s:%d, %q) =\n %q\nwant\n %q", tc.host, tc.port, tc.reason, got, tc.want)
		}
	}
}

// TestRefusedLineKinds: a refused lookup and a refused datagram are said
// in their own words, with the flag only where an --allow would lift the
// refusal.
func TestRefusedLineKinds(t *testing.T) {
	for _, tc := range []struct {
		kind   string
		host   string
		port   uint16
		reason string
		want   string
	}{
		{kindLookup, "npm.test", 0, "not on the allowlist", "network: refused lookup of npm.test (not on the allowlist of profile agent; allow it with --allow npm.test)"},
		{kindLookup, "gone.test", 0, "does not resolve", "network: refused lookup of gone.test (does not resolve)"},
		{kindLookup, "loop.test", 0, "resolves only to loopback, link-local or private addresses", "network: refused lookup of loop.test (resolves only to loopback, link-local or private addresses)"},
		{kindLookup, "slow.test", 0, "the host's resolver failed", "network: refused lookup of slow.test (the host's resolver failed)"},
		{kindLookup, "a_b.test", 0, "not on the allowlist", "network: refused lookup of (a name that is not a host name) (not on the allowlist)"},
		// An address or a reverse lookup's name on the list would not
		// make the resolver answer it.
		{kindLookup, "1.2.3.4", 0, "not on the allowlist", "network: refused lookup of 1.2.3.4 (not on the allowlist)"},
		{kindLookup, "4.3.2.1.in-addr.arpa", 0, "not on the allowlist", "network: refused lookup of 4.3.2.1.in-addr.arpa (not on the allowlist)"},
		{kindLookup, "example.com", 0, reasonOff, "network is off in this jail; refused lookup of example.com (allow it with --allow example.com)"},
		{kindLookup, "4.3.2.1.in-addr.arpa", 0, reasonOff, "network is off in this jail; refused lookup of 4.3.2.1.in-addr.arpa"},
		{kindLookup, "x\x1b[2J", 0, reasonOff, "network is off in this jail; refused lookup of (a name that is not a host name)"},
		{kindUDP, "8.8.8.8", 53, "only TCP leaves the jail", "network: refused udp 8.8.8.8:53 (only TCP leaves the jail)"},
		{kindUDP, "2606:4700::1111", 443, "only TCP leaves the jail", "network: refused udp [2606:4700::1111]:443 (only TCP leaves the jail)"},
		{kindUDP, "quic.test", 443, "only TCP leaves the jail", "network: refused udp quic.test:443 (only TCP leaves the jail)"},
		{kindTCP, "api.test", 443, "too many connections", "network: refused api.test:443 (too many connections)"},
		{kindTCP, "198.18.0.7", 443, "an address the jail's resolver did not give", "network: refused 198.18.0.7:443 (an address the jail's resolver did not give)"},
	} {
		if got := refusedLine(tc.kind, target{tc.host, tc.port}, tc.reason, "agent"); got != tc.want {
			t.Errorf("refusedLine(%s, %s:%d, %q) =\n %q\nwant\n %q", tc.kind, tc.host, tc.port, tc.reason, got, tc.want)
		}
	}
}

// TestProxyConnLimit: past maxConns connections open through the two
// proxies together, the next is closed and recorded; once one ends,
// another is served.
func TestProxyConnLimit(t *testing.T) {
	p, rr := newTestProxy(t, Config{Mode: "allowlist"})
	served := make(chan struct{}, maxConns+1)
	release := make(chan struct{})
	serve := func(c net.Conn) {
		served <- struct{}{}
		<-release
	}
	var lns []net.Listener
	for i := 0; i < 2; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go p.accept(ln, serve)
		lns = append(lns, ln)
	}
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	dial := func(ln net.Listener) net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		return c
	}
	for i := 0; i < maxConns; i++ {
		dial(lns[i%2])
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Fatalf("connection %d not served", i+1)
		}
	}
	last := dial(lns[1])
	last.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := last.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("connection %d: read %d, %v: want it closed", maxConns+1, n, err)
	}
	port := uint16(lns[1].Addr().(*net.TCPAddr).Port)
	want := []string{fmt.Sprintf("network: refused 127.0.0.1:%d (too many connections)", port)}
	if got := rr.refused(t); !slices.Equal(got, want) {
		t.Errorf("lines: %q, want %q", got, want)
	}
	denied, _ := record(t, p, rr)
	if wantRec := []HostDenial{{"127.0.0.1", port, 1, "too many connections", "tcp"}}; !slices.Equal(denied, wantRec) {
		t.Errorf("record: %+v, want %+v", denied, wantRec)
	}
	release <- struct{}{}
	for i := 0; len(p.conns) == maxConns && i < 1000; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	dial(lns[0])
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Error("no connection served after one ended")
	}
	close(release)
}
