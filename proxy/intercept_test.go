// Interception end to end on the host's loopback: a program in the jail
// (a Go client, through each way out), the helper with the run's
// authority, and a real server with a certificate of its own authority.

package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/testcert"
)

// The secrets, and the placeholders the jail holds instead.
const (
	secretA = "sk-real-secret-aaaa-0123456789"
	secretB = "sk-real-secret-bbbb-9876543210"
	phA     = "jail-placeholder-0123456789abcdef0123456789abcdef"
	phB     = "jail-placeholder-fedcba9876543210fedcba9876543210"
	// downSize is each answer's body, upSize each request's.
	downSize = 20000
	upSize   = 10000
)

func pool(certs ...*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}

// seen is a request as a real server read it.
type seen struct {
	proto, host, uri string
	header           http.Header
	body             int
}

// fixture is a helper that binds API_KEY to api.test and SECOND_KEY (in
// x-api-key only) to second.test, and also allows other.test; all three
// are served, on port 443, by one real server, and on port 80 by a plain
// one.
type fixture struct {
	p      *proxy
	rr     *reportReader
	runCA  *x509.Certificate
	upCA   *x509.Certificate
	got    chan seen // what the real TLS server read
	gotRaw chan seen // what the plain server read
}

type fixtureOpts struct {
	upstreamH1     bool // the real server speaks HTTP/1.1 only
	untrustedUp    bool // network.upstream_ca not given
	extraAllow     []Allow
	extraRedirects map[string]string
}

func newFixture(t *testing.T, o fixtureOpts) *fixture {
	t.Helper()
	f := &fixture{got: make(chan seen, 64), gotRaw: make(chan seen, 64)}
	var runKey, upKey *ecdsa.PrivateKey
	f.runCA, runKey = testcert.CA(t, "jail run", "api.test", "second.test")
	f.upCA, upKey = testcert.CA(t, "upstream root")
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "websocket" {
			// Switched, then an echo.
			c, brw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer c.Close()
			io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
			io.Copy(c, brw)
			return
		}
		n, _ := io.Copy(io.Discard, r.Body)
		f.got <- seen{r.Proto, r.Host, r.RequestURI, r.Header.Clone(), int(n)}
		w.Write(bytes.Repeat([]byte("d"), downSize))
	}))
	up.EnableHTTP2 = !o.upstreamH1
	up.TLS = &tls.Config{Certificates: []tls.Certificate{testcert.Leaf(t, f.upCA, upKey, "api.test", "second.test", "other.test")}}
	up.StartTLS()
	t.Cleanup(up.Close)
	plain := server(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			f.gotRaw <- seen{req.Proto, req.Host, req.RequestURI, req.Header.Clone(), 0}
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	keyDER, err := x509.MarshalPKCS8PrivateKey(runKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Mode: "allowlist", Profile: "agent",
		Allow: append([]Allow{{Host: "api.test"}, {Host: "second.test"}, {Host: "other.test"}}, o.extraAllow...),
		Hosts: map[string]string{"api.test": "127.0.0.1", "second.test": "127.0.0.1", "other.test": "127.0.0.1"},
		Credentials: []Credential{
			{Env: "API_KEY", Hosts: []string{"api.test"}, Placeholder: phA, Value: secretA},
			{Env: "SECOND_KEY", Hosts: []string{"second.test"}, Header: "x-api-key", Placeholder: phB, Value: secretB},
		},
		CACert: f.runCA.Raw, CAKey: keyDER}
	if !o.untrustedUp {
		cfg.UpstreamCA = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.upCA.Raw})
	}
	f.p, f.rr = newTestProxy(t, cfg)
	if f.p.creds, err = newCredentials(cfg); err != nil {
		t.Fatal(err)
	}
	redirects := redirect{
		"127.0.0.1:443": up.Listener.Addr().String(),
		"127.0.0.1:80":  fmt.Sprintf("127.0.0.1:%d", plain),
	}
	for from, to := range o.extraRedirects {
		redirects[from] = to
	}
	f.p.dialer = redirects
	t.Cleanup(func() { f.noSecret(t) })
	return f
}

// client is a program in the jail that trusts roots and opens its
// connections the way named (waysOut), offering HTTP/2 when h2.
func (f *fixture) client(t *testing.T, way string, h2 bool, roots *x509.CertPool) *http.Client {
	open := waysOut(t)[way]
	tr := &http.Transport{
		DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
			host, ps, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			port, _ := strconv.Atoi(ps)
			fake, err := f.p.fakeAddr(host)
			if err != nil {
				return nil, err
			}
			return open(f.p, netip.AddrPortFrom(fake, uint16(port)))
		},
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		ForceAttemptHTTP2: h2,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

// do sends a request, with a body of upSize bytes when post, and returns
// the answer and its body.
func do(t *testing.T, c *http.Client, post bool, url string, header map[string]string, host string) (*http.Response, []byte) {
	t.Helper()
	method, body := http.MethodGet, io.Reader(nil)
	if post {
		method, body = http.MethodPost, bytes.NewReader(bytes.Repeat([]byte("u"), upSize))
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s %s: body: %v", method, url, err)
	}
	return resp, b
}

func (f *fixture) next(t *testing.T) seen {
	t.Helper()
	select {
	case s := <-f.got:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("the real server read no request")
		return seen{}
	}
}

// creds is the report's credential lists, and the line they were read from.
func (f *fixture) creds(t *testing.T) ([]CredentialUse, []CredentialMisuse, string) {
	t.Helper()
	f.p.report()
	f.rr.sync(t)
	f.rr.mu.Lock()
	last := f.rr.lines[len(f.rr.lines)-1]
	f.rr.mu.Unlock()
	var rec struct {
		Use    []CredentialUse    `json:"credential_use"`
		Misuse []CredentialMisuse `json:"credential_misuse"`
	}
	if err := json.Unmarshal([]byte("{"+last+"}"), &rec); err != nil {
		t.Fatalf("report line %.300q: %v", last, err)
	}
	if rec.Use == nil || rec.Misuse == nil {
		t.Errorf("report line without the credential lists: %.300q", last)
	}
	return rec.Use, rec.Misuse, last
}

// noSecret: no line the helper wrote holds a real value.
func (f *fixture) noSecret(t *testing.T) {
	f.p.report()
	f.rr.sync(t)
	f.rr.mu.Lock()
	defer f.rr.mu.Unlock()
	for _, l := range f.rr.lines {
		if strings.Contains(l, secretA) || strings.Contains(l, secretB) {
			t.Errorf("a line of the helper's holds a secret: %.300q", l)
		}
	}
}

// TestInterceptSubstitutes: a request to a bound host, through each way
// out, in HTTP/2 and HTTP/1.1 to a real server speaking either, reaches
// the server with the real value in every header that held the
// placeholder; the program saw a certificate of the run's authority for
// exactly that name; the record counts the request and its bodies.
func TestInterceptSubstitutes(t *testing.T) {
	for _, upH1 := range []bool{false, true} {
		f := newFixture(t, fixtureOpts{upstreamH1: upH1})
		n := 0
		for _, way := range []string{"stack", "http", "socks"} {
			for _, h2 := range []bool{true, false} {
				name := fmt.Sprintf("%s h2=%v upstream h1=%v", way, h2, upH1)
				c := f.client(t, way, h2, pool(f.runCA))
				resp, body := do(t, c, true, "https://api.test/v1/messages?q=1", map[string]string{
					"Authorization": "Bearer " + phA, "X-Api-Key": phA, "X-Plain": "nothing to replace"}, "")
				n++
				if resp.StatusCode != 200 || len(body) != downSize || (resp.ProtoMajor == 2) != h2 {
					t.Errorf("%s: %s %s, %d bytes", name, resp.Proto, resp.Status, len(body))
				}
				s := f.next(t)
				if s.header.Get("Authorization") != "Bearer "+secretA || s.header.Get("X-Api-Key") != secretA ||
					s.header.Get("X-Plain") != "nothing to replace" {
					t.Errorf("%s: the server read %v", name, s.header)
				}
				if s.body != upSize || s.host != "api.test" || s.uri != "/v1/messages?q=1" || (s.proto == "HTTP/2.0") == upH1 {
					t.Errorf("%s: the server read %s %s%s, %d bytes", name, s.proto, s.host, s.uri, s.body)
				}
				leaf := resp.TLS.PeerCertificates[0]
				if !slices.Equal(leaf.DNSNames, []string{"api.test"}) || !bytes.Equal(leaf.RawIssuer, f.runCA.RawSubject) ||
					leaf.CheckSignatureFrom(f.runCA) != nil || len(leaf.IPAddresses) != 0 {
					t.Errorf("%s: the program got a certificate for %v from %s", name, leaf.DNSNames, leaf.Issuer)
				}
				if _, ok := leaf.PublicKey.(*ecdsa.PublicKey); !ok || leaf.NotAfter.After(f.runCA.NotAfter) || leaf.NotBefore.Before(f.runCA.NotBefore) {
					t.Errorf("%s: the certificate's key %T, valid %s to %s", name, leaf.PublicKey, leaf.NotBefore, leaf.NotAfter)
				}
			}
		}
		use, misuse, line := f.creds(t)
		want := []CredentialUse{{"API_KEY", "api.test", n, int64(n * upSize), int64(n * downSize)}, {"SECOND_KEY", "second.test", 0, 0, 0}}
		if !slices.Equal(use, want) || len(misuse) != 0 {
			t.Errorf("upstream h1=%v: credential_use %+v, misuse %+v; want %+v", upH1, use, misuse, want)
		}
		if !strings.HasSuffix(line, "]") || !strings.Contains(line, `"network_allowed":[{"host":"api.test","port":443,`) {
			t.Errorf("report line %.400q", line)
		}
		if l := f.rr.refused(t); len(l) != 0 {
			t.Errorf("lines: %q", l)
		}
	}
}

// TestInterceptHeaderOnly: a binding that names a header has its value put
// in that header only (its name in any case); elsewhere the placeholder
// goes as it was.
func TestInterceptHeaderOnly(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	c := f.client(t, "stack", true, pool(f.runCA))
	resp, _ := do(t, c, false, "https://second.test/", map[string]string{"Authorization": "Bearer " + phB, "X-API-KEY": phB}, "")
	if resp.StatusCode != 200 {
		t.Fatalf("%s", resp.Status)
	}
	s := f.next(t)
	if s.header.Get("X-Api-Key") != secretB || s.header.Get("Authorization") != "Bearer "+phB {
		t.Errorf("the server read %v", s.header)
	}
	use, _, _ := f.creds(t)
	if want := []CredentialUse{{"API_KEY", "api.test", 0, 0, 0}, {"SECOND_KEY", "second.test", 1, 0, downSize}}; !slices.Equal(use, want) {
		t.Errorf("credential_use %+v, want %+v", use, want)
	}
}

// TestInterceptMisuse: a placeholder sent to a host its variable is not
// bound to (in a header or the URL of an intercepted request, or in a
// plain HTTP request, through the stack or the HTTP proxy) goes
// unchanged, and is counted.
func TestInterceptMisuse(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	c := f.client(t, "http", true, pool(f.runCA))
	do(t, c, false, "https://api.test/?k="+phB, map[string]string{"X-Other": phB, "Authorization": phA}, "")
	s := f.next(t)
	if s.header.Get("X-Other") != phB || s.uri != "/?k="+phB || s.header.Get("Authorization") != secretA {
		t.Errorf("the server read %s %v", s.uri, s.header)
	}

	jail, err := waysOut(t)["stack"](f.p, netip.AddrPortFrom(resolved(t, f.p, "other.test"), 80))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(jail, "GET /a HTTP/1.1\r\nHost: other.test\r\nAuthorization: Bearer %s\r\n\r\n", phA)
	if resp, err := http.ReadResponse(bufio.NewReader(jail), nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("plain request: %v, %v", resp, err)
	}
	jail.Close()

	jail, served := pair(t)
	go f.p.serveHTTP(served)
	fmt.Fprintf(jail, "GET http://other.test/b?k=%s HTTP/1.1\r\nHost: other.test\r\n\r\n", phB)
	if resp, err := http.ReadResponse(bufio.NewReader(jail), nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("plain proxy request: %v, %v", resp, err)
	}
	for i, want := range []string{"Bearer " + phA, ""} {
		select {
		case s := <-f.gotRaw:
			if s.header.Get("Authorization") != want {
				t.Errorf("plain request %d: the server read %v", i, s.header)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("plain request %d not read", i)
		}
	}

	use, misuse, _ := f.creds(t)
	want := []CredentialMisuse{{"API_KEY", "other.test", 1}, {"SECOND_KEY", "api.test", 1}, {"SECOND_KEY", "other.test", 1}}
	if !slices.Equal(misuse, want) {
		t.Errorf("credential_misuse %+v, want %+v", misuse, want)
	}
	if use[0].Requests != 1 {
		t.Errorf("credential_use %+v", use)
	}
}

// TestInterceptHostChecked: a request in an intercepted connection for
// another host than its SNI is answered 421, recorded and said, and never
// reaches the server.
func TestInterceptHostChecked(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	for _, h2 := range []bool{true, false} {
		c := f.client(t, "stack", h2, pool(f.runCA))
		resp, _ := do(t, c, false, "https://api.test/", map[string]string{"Authorization": phA}, "second.test")
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("h2=%v: %s", h2, resp.Status)
		}
	}
	select {
	case s := <-f.got:
		t.Errorf("the server read a request for %s", s.host)
	default:
	}
	want := "HTTP Host 'second.test' is not the host asked for"
	if l := f.rr.refused(t); !slices.Equal(l, []string{"network: refused api.test:443 (" + want + ")"}) {
		t.Errorf("lines: %q", l)
	}
	denied, _ := record(t, f.p, f.rr)
	if !slices.Equal(denied, []HostDenial{{"api.test", 443, 2, want, kindTCP}}) {
		t.Errorf("denied: %+v", denied)
	}
	if use, _, _ := f.creds(t); use[0].Requests != 0 {
		t.Errorf("credential_use %+v", use)
	}
}

// closeOnRead is a connection whose program drops it at its first read:
// the server's first flight, in a handshake.
type closeOnRead struct{ net.Conn }

func (c closeOnRead) Read([]byte) (int, error) {
	c.Conn.Close()
	return 0, io.EOF
}

// TestInterceptRefused: a program that does not trust the run's authority
// (it pins certificates, or ignores SSL_CERT_FILE), whether it says so or
// drops the connection, gets no answer; one line says the host was
// intercepted and why the program failed, and the record counts each.
func TestInterceptRefused(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	for i := 0; i < 2; i++ {
		c := f.client(t, "socks", true, pool(f.upCA))
		if _, err := c.Get("https://api.test/"); err == nil {
			t.Fatal("a program that trusts only the real server's root got through")
		}
	}
	jail, err := waysOut(t)["stack"](f.p, netip.AddrPortFrom(resolved(t, f.p, "api.test"), 443))
	if err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(closeOnRead{jail}, &tls.Config{ServerName: "api.test"})
	if err := tc.Handshake(); err == nil {
		t.Fatal("handshake with a dropped connection")
	}
	want := "network: api.test:443 was intercepted to inject API_KEY, and the program refused jail's certificate for it " +
		"(it pins certificates or does not trust SSL_CERT_FILE); that program cannot use a bound credential"
	var denied []HostDenial
	for i := 0; i < 200; i++ {
		if denied, _ = record(t, f.p, f.rr); len(denied) == 1 && denied[0].Count == 3 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !slices.Equal(denied, []HostDenial{{"api.test", 443, 3, reasonRefusedCert, kindTCP}}) {
		t.Errorf("denied: %+v", denied)
	}
	if l := f.rr.refused(t); !slices.Equal(l, []string{want}) {
		t.Errorf("lines: %q, want %q", l, want)
	}
	if strings.Contains(want, "allow it with --allow ") {
		t.Error("the line suggests an --allow")
	}
	select {
	case s := <-f.got:
		t.Errorf("the server read a request for %s", s.host)
	default:
	}
}

// TestInterceptUpstreamUntrusted: a real server whose certificate the
// host's roots and network.upstream_ca do not verify gets no request; the
// program reads 502 and why, and the refusal is said and recorded.
func TestInterceptUpstreamUntrusted(t *testing.T) {
	f := newFixture(t, fixtureOpts{untrustedUp: true})
	c := f.client(t, "stack", true, pool(f.runCA))
	resp, body := do(t, c, false, "https://api.test/", map[string]string{"Authorization": phA}, "")
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "did not verify") || !strings.Contains(string(body), "network.upstream_ca") {
		t.Errorf("%s: %q", resp.Status, body)
	}
	why := "the real server's certificate did not verify: signed by an authority neither the system roots nor network.upstream_ca hold"
	if l := f.rr.refused(t); !slices.Equal(l, []string{"network: refused api.test:443 (" + why + ")"}) {
		t.Errorf("lines: %q", l)
	}
	denied, _ := record(t, f.p, f.rr)
	if !slices.Equal(denied, []HostDenial{{"api.test", 443, 1, why, kindTCP}}) {
		t.Errorf("denied: %+v", denied)
	}
	select {
	case s := <-f.got:
		t.Errorf("the server read a request for %s", s.host)
	default:
	}
}

// TestInterceptOnlyBound: a host no credential is bound to, even one the
// real server shares with a bound one, is relayed as before: the program
// sees the real server's certificate, and reads what it sent.
func TestInterceptOnlyBound(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	for _, way := range []string{"stack", "http", "socks"} {
		c := f.client(t, way, true, pool(f.upCA))
		resp, body := do(t, c, false, "https://other.test/", map[string]string{"Authorization": phA}, "")
		if resp.StatusCode != 200 || len(body) != downSize {
			t.Errorf("%s: %s, %d bytes", way, resp.Status, len(body))
		}
		if leaf := resp.TLS.PeerCertificates[0]; leaf.CheckSignatureFrom(f.upCA) != nil {
			t.Errorf("%s: the program got a certificate from %s, not the real server's", way, leaf.Issuer)
		}
		if s := f.next(t); s.header.Get("Authorization") != phA {
			t.Errorf("%s: the server read %v", way, s.header)
		}
	}
	if use, _, _ := f.creds(t); use[0].Requests != 0 {
		t.Errorf("credential_use %+v", use)
	}
}

// TestInterceptOtherPort: to another port than 443 of a bound host, a TLS
// client is intercepted; a protocol whose server speaks first is relayed
// raw, after a short wait for the client.
func TestInterceptOtherPort(t *testing.T) {
	banner := server(t, func(c net.Conn) {
		io.WriteString(c, "SSH-2.0-test\r\n")
		io.Copy(c, c)
	})
	f := newFixture(t, fixtureOpts{extraAllow: []Allow{{Host: "api.test", Port: 8443}, {Host: "api.test", Port: 2222}}})
	up := f.p.dialer.(redirect)["127.0.0.1:443"]
	f.p.dialer.(redirect)["127.0.0.1:8443"] = up
	f.p.dialer.(redirect)["127.0.0.1:2222"] = fmt.Sprintf("127.0.0.1:%d", banner)
	c := f.client(t, "stack", true, pool(f.runCA))
	resp, _ := do(t, c, false, "https://api.test:8443/", map[string]string{"Authorization": phA}, "")
	if resp.StatusCode != 200 {
		t.Fatalf("%s", resp.Status)
	}
	if s := f.next(t); s.header.Get("Authorization") != secretA || s.host != "api.test:8443" {
		t.Errorf("the server read %s %v", s.host, s.header)
	}
	jail, err := waysOut(t)["stack"](f.p, netip.AddrPortFrom(resolved(t, f.p, "api.test"), 2222))
	if err != nil {
		t.Fatal(err)
	}
	jail.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(jail)
	if l, err := br.ReadString('\n'); err != nil || l != "SSH-2.0-test\r\n" {
		t.Fatalf("banner %q, %v", l, err)
	}
	io.WriteString(jail, "hello\n")
	if l, err := br.ReadString('\n'); err != nil || l != "hello\n" {
		t.Errorf("echo %q, %v", l, err)
	}
}

// TestCredentialsChecked: bindings and an authority the helper cannot use
// end it before anything is served, and the error never holds a value.
func TestCredentialsChecked(t *testing.T) {
	ca, key := testcert.CA(t, "run", "api.test")
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	_, other := testcert.CA(t, "other")
	otherDER, _ := x509.MarshalPKCS8PrivateKey(other)
	good := func() Config {
		return Config{Credentials: []Credential{{Env: "K", Hosts: []string{"api.test"}, Placeholder: phA, Value: secretA}},
			CACert: ca.Raw, CAKey: keyDER}
	}
	if c, err := newCredentials(good()); err != nil || c == nil {
		t.Fatalf("good: %v", err)
	}
	if c, err := newCredentials(Config{}); err != nil || c != nil {
		t.Errorf("none: %v, %v", c, err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"placeholder", func(c *Config) { c.Credentials[0].Placeholder = "x" + phA }, "placeholder"},
		{"bare prefix", func(c *Config) { c.Credentials[0].Placeholder = PlaceholderPrefix }, "placeholder"},
		{"no value", func(c *Config) { c.Credentials[0].Value = "" }, "empty value"},
		{"line break", func(c *Config) { c.Credentials[0].Value = secretA + "\r\nX-Evil: 1" }, "line break"},
		{"no host", func(c *Config) { c.Credentials[0].Hosts = nil }, "no host"},
		{"wildcard", func(c *Config) { c.Credentials[0].Hosts = []string{"*.api.test"} }, "not a host name"},
		{"address", func(c *Config) { c.Credentials[0].Hosts = []string{"10.1.2.3"} }, "not a host name"},
		{"upper case", func(c *Config) { c.Credentials[0].Hosts = []string{"API.test"} }, "not a host name"},
		{"header", func(c *Config) { c.Credentials[0].Header = "x api key" }, "not a header name"},
		{"no variable", func(c *Config) { c.Credentials[0].Env = "" }, "no variable"},
		{"same placeholder", func(c *Config) { c.Credentials = append(c.Credentials, c.Credentials[0]) }, "another's"},
		{"no authority", func(c *Config) { c.CACert = nil }, "certificate authority"},
		{"no key", func(c *Config) { c.CAKey = nil }, "key"},
		{"another key", func(c *Config) { c.CAKey = otherDER }, "not its certificate's"},
		{"upstream_ca", func(c *Config) { c.UpstreamCA = []byte("not PEM") }, "upstream_ca"},
	} {
		cfg := good()
		tc.change(&cfg)
		_, err := newCredentials(cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		} else if strings.Contains(err.Error(), secretA) {
			t.Errorf("%s: the error holds the value: %v", tc.name, err)
		}
	}
}

// TestMainBadAuthority: started with an authority it cannot read, the
// helper says so on the report pipe and ends with 125.
func TestMainBadAuthority(t *testing.T) {
	cfg, _ := json.Marshal(Config{Mode: "allowlist", CACert: []byte("junk"), CAKey: []byte("junk"),
		Credentials: []Credential{{Env: "K", Hosts: []string{"api.test"}, Placeholder: phA, Value: secretA}}})
	got, err := mainRefuses(t, cfg)
	if !strings.HasPrefix(got, "jail: network helper: configuration: the run's certificate authority: ") || strings.Contains(got, secretA) {
		t.Errorf("said %q", got)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 125 {
		t.Errorf("exit: %v, want 125", err)
	}
}

// TestCredentialReportBounded: with every list of the record at its bound
// and the worst names a jail can choose, the report line stays under what
// the runner reads (256 KiB), valid JSON fields ending in ']'.
func TestCredentialReportBounded(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	worst := strings.Repeat("<\x01\"", 2000)
	var creds []Credential
	for i := 0; i < 2*maxCredEntries; i++ {
		creds = append(creds, Credential{Env: fmt.Sprintf("K%d%s", i, worst), Hosts: []string{fmt.Sprintf("h%d.test", i)},
			Placeholder: fmt.Sprintf("%s%d", phA, i), Value: secretA})
	}
	p := newProxy(Config{Credentials: creds}, w)
	p.creds = &credentials{}
	for i := range creds {
		p.creds.all = append(p.creds.all, &creds[i])
	}
	p.creds.rec = newCredRecord(p.creds.all)
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		read <- b
	}()
	for i := 0; i < 2*maxEntries; i++ {
		p.deny(kindTCP, target{fmt.Sprintf("%d%s", i, worst), uint16(i)}, "TLS SNI '"+worst+"' is not the host asked for")
		p.track(target{fmt.Sprintf("%d%s", i, worst), uint16(i)})
		p.credMisused(p.creds.all[i%len(creds)], fmt.Sprintf("%d%s", i, worst))
	}
	p.credUsed(p.creds.all, "h1.test")
	p.report()
	w.Close()
	lines := strings.Split(strings.TrimSuffix(string(<-read), "\n"), "\n")
	line := lines[len(lines)-1]
	if len(line) >= 256<<10 {
		t.Errorf("a report line of %d bytes: the runner reads at most %d", len(line), 256<<10)
	}
	var rec struct {
		Use    []CredentialUse    `json:"credential_use"`
		Misuse []CredentialMisuse `json:"credential_misuse"`
	}
	if err := json.Unmarshal([]byte("{"+line+"}"), &rec); err != nil || !strings.HasSuffix(line, "]") {
		t.Fatalf("the report line is not JSON fields ending in ']': %v", err)
	}
	if len(rec.Use) != maxCredEntries+1 || len(rec.Misuse) != maxCredEntries+1 {
		t.Errorf("%d use and %d misuse entries, want %d each", len(rec.Use), len(rec.Misuse), maxCredEntries+1)
	}
}

// open serves one connection of the jail's to host:443 as the ways out
// do, the server's end dialed through the policy (or server, when
// given); done is closed when it was served.
func (f *fixture) open(t *testing.T, host string, server net.Conn) (jail net.Conn, done chan struct{}) {
	t.Helper()
	conn, tg, err := f.p.dial(host, 443)
	if err != nil {
		t.Fatal(err)
	}
	if server != nil {
		conn.Close()
		conn = server
	}
	jail, served := pair(t)
	done = make(chan struct{})
	go func() {
		f.p.serveConn(tg, served, conn, bufio.NewReader(served))
		close(done)
	}()
	return jail, done
}

func servedUntilClosed(t *testing.T, what string, done chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Errorf("%s: the intercepted connection was still served 10 s after the program closed it", what)
	}
}

// TestInterceptEnds: an intercepted connection is served until the
// program closes it, in HTTP/2 and HTTP/1.1; one that made no request
// closes the connection dialed for it.
func TestInterceptEnds(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	for _, h2 := range []bool{true, false} {
		var done chan struct{}
		tr := &http.Transport{
			DialContext: func(context.Context, string, string) (net.Conn, error) {
				var jail net.Conn
				jail, done = f.open(t, "api.test", nil)
				return jail, nil
			},
			TLSClientConfig:   &tls.Config{RootCAs: pool(f.runCA)},
			ForceAttemptHTTP2: h2,
		}
		resp, _ := do(t, &http.Client{Transport: tr}, false, "https://api.test/", nil, "")
		if resp.StatusCode != 200 || (resp.ProtoMajor == 2) != h2 {
			t.Errorf("h2=%v: %s %s", h2, resp.Proto, resp.Status)
		}
		f.next(t)
		tr.CloseIdleConnections()
		servedUntilClosed(t, fmt.Sprintf("h2=%v", h2), done)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	server, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	far, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer far.Close()
	jail, done := f.open(t, "api.test", server)
	tc := tls.Client(jail, &tls.Config{ServerName: "api.test", RootCAs: pool(f.runCA)})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	tc.Close()
	servedUntilClosed(t, "no request", done)
	far.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := far.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("the connection dialed for the program: read %d, %v; want it closed", n, err)
	}
}

// TestInterceptWebSocket: a WebSocket the real server agreed to goes on,
// both ways, until the program closes it.
func TestInterceptWebSocket(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	jail, done := f.open(t, "api.test", nil)
	tc := tls.Client(jail, &tls.Config{ServerName: "api.test", RootCAs: pool(f.runCA), NextProtos: []string{"http/1.1"}})
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(tc, "GET /ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nAuthorization: %s\r\n\r\n", phA)
	br := bufio.NewReader(tc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("%v, %v", resp, err)
	}
	for _, m := range []string{"ping\n", "pong\n"} {
		io.WriteString(tc, m)
		if l, err := br.ReadString('\n'); err != nil || l != m {
			t.Fatalf("echo %q, %v", l, err)
		}
	}
	select {
	case <-done:
		t.Fatal("served no more while the WebSocket was open")
	default:
	}
	tc.Close()
	servedUntilClosed(t, "websocket", done)
	if use, _, _ := f.creds(t); use[0].Requests != 1 {
		t.Errorf("credential_use %+v", use)
	}
}
