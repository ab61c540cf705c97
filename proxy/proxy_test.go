package proxy

import (
	"net/netip"
	"testing"
)

func TestInternal(t *testing.T) {
	for _, s := range []string{
		"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.1.2.3",
		"192.0.0.170", "198.18.0.1", "240.0.0.1", "255.255.255.255", "224.0.0.1", "::1", "fe80::1", "fc00::1",
		"64:ff9b::a9fe:a9fe", "::7f00:1", "2002:a9fe:a9fe::1", "64:ff9b:1::1", "::",
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
