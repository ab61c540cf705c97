// The transparent path's policy and relays, on real sockets on the host's
// loopback standing for the stack's connections.

package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

// handler is netstack.Handler, which proxy does not import (the stack
// would come with it): the stack calls these.
type handler interface {
	Dial(dst netip.AddrPort) (net.Conn, error)
	Serve(dst netip.AddrPort, client, upstream net.Conn)
	RefusedUDP(dst netip.AddrPort)
	Overloaded(dst netip.AddrPort)
}

var _ handler = (*transparent)(nil)

// echo serves each connection by sending back what it reads.
func echo(c net.Conn) { io.Copy(c, c) }

// resolved is name's fake address, as the jail's resolver gives it.
func resolved(t *testing.T, p *proxy, name string) netip.Addr {
	t.Helper()
	a, err := p.fakeAddr(name)
	if err != nil {
		t.Fatalf("resolving %s: %v", name, err)
	}
	return a
}

// TestDialFake: a connection to the fake address of an allowed name (v4
// or its v6 twin) reaches the name's pinned address; one to a port the
// list does not name, an address the resolver never gave, or an unlisted
// literal is refused, recorded and said.
func TestDialFake(t *testing.T) {
	port := server(t, echo)
	p, rr := newTestProxy(t, Config{Mode: "allowlist", Profile: "agent", resolver: deadResolver(t),
		Allow: []Allow{{Host: "api.test", Port: port}, {Host: "127.0.0.1", IP: true, Port: port}},
		Hosts: map[string]string{"api.test": "127.0.0.1"}})
	h := &transparent{p}
	fake := resolved(t, p, "api.test")
	for _, dst := range []netip.Addr{fake, twin(fake), netip.MustParseAddr("127.0.0.1")} {
		c, err := h.Dial(netip.AddrPortFrom(dst, port))
		if err != nil {
			t.Fatalf("Dial(%s): %v", dst, err)
		}
		c.Write([]byte("ping"))
		b := make([]byte, 4)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(c, b); err != nil || string(b) != "ping" {
			t.Errorf("Dial(%s): read %q, %v", dst, b, err)
		}
		c.Close()
	}
	unknown := fake.Next()
	if unknown == fake {
		t.Fatal("no next address")
	}
	for _, dst := range []netip.AddrPort{
		netip.AddrPortFrom(fake, 443), netip.AddrPortFrom(twin(fake), 22),
		netip.AddrPortFrom(unknown, port), netip.MustParseAddrPort("93.184.216.9:443"),
		netip.MustParseAddrPort("127.0.0.1:443"), netip.MustParseAddrPort("[::ffff:169.254.169.254]:80"),
	} {
		c, err := h.Dial(dst)
		var d *errDenied
		if err == nil || !errors.As(err, &d) {
			t.Errorf("Dial(%s) = %v, %v: want a refusal", dst, c, err)
		}
	}
	want := []string{
		"network: refused api.test:443 (not on the allowlist of profile agent; allow it with --allow api.test)",
		"network: refused api.test:22 (not on the allowlist of profile agent; allow it with --allow api.test:22)",
		fmt.Sprintf("network: refused %s:%d (an address the jail's resolver did not give)", unknown, port),
		"network: refused 93.184.216.9:443 (IP address not on the allowlist of profile agent; allow it with --allow 93.184.216.9)",
		"network: refused 127.0.0.1:443 (IP address not on the allowlist)",
		"network: refused 169.254.169.254:80 (IP address not on the allowlist)",
	}
	if got := rr.refused(t); !slices.Equal(got, want) {
		t.Errorf("lines:\n %q\nwant\n %q", got, want)
	}
	denied, _ := record(t, p, rr)
	for _, d := range denied {
		if d.Kind != kindTCP || d.Count != 1 {
			t.Errorf("record entry %+v: want kind tcp, once", d)
		}
	}
	if len(denied) != len(want) {
		t.Errorf("%d record entries, want %d: %+v", len(denied), len(want), denied)
	}
}

// TestDialVetted: a connection uses the addresses vetted when the name
// was resolved, for its port: an internal one only when pinned or named
// for that port.
func TestDialVetted(t *testing.T) {
	p, rr := newTestProxy(t, Config{Mode: "allowlist", resolver: hostResolver(t),
		Allow: []Allow{{Host: "x.test", Wildcard: true, Port: 8080}, {Host: "10.1.2.3", IP: true, Port: 9090},
			{Host: "x.test", Wildcard: true, Port: 9090}}})
	fake := resolved(t, p, "private.x.test") // 10.1.2.3: named for 9090 only
	if _, err := (&transparent{p}).Dial(netip.AddrPortFrom(fake, 8080)); err == nil {
		t.Fatal("private.x.test:8080 dialled 10.1.2.3, named for 9090 only")
	}
	if got := rr.refused(t); !slices.Equal(got, []string{"network: refused private.x.test:8080 (resolves only to loopback, link-local or private addresses)"}) {
		t.Errorf("lines: %q", got)
	}
	_, addrs, err := p.permit(fake.String(), 9090)
	if err != nil || !slices.Equal(addrs, []netip.Addr{netip.MustParseAddr("10.1.2.3")}) {
		t.Errorf("private.x.test:9090: %v, %v", addrs, err)
	}
}

// clientHello is a TLS ClientHello record naming sni.
func clientHello(sni string) []byte {
	name := []byte(sni)
	n := len(name)
	ext := []byte{0, 0, byte((n + 5) >> 8), byte(n + 5), byte((n + 3) >> 8), byte(n + 3), 0, byte(n >> 8), byte(n)}
	ext = append(ext, name...)
	body := append([]byte{3, 3}, make([]byte, 32)...)
	body = append(body, 0, 0, 2, 0x13, 1, 1, 0)
	body = append(body, byte(len(ext)>>8), byte(len(ext)))
	body = append(body, ext...)
	hs := append([]byte{1, 0, byte(len(body) >> 8), byte(len(body))}, body...)
	return append([]byte{0x16, 3, 1, byte(len(hs) >> 8), byte(len(hs))}, hs...)
}

// serveOne runs Serve for a connection to dst, the upstream a fresh
// connection to the local server at port; it returns the jail's end and
// a channel closed when Serve returns.
func serveOne(t *testing.T, h *transparent, dst netip.AddrPort, port uint16) (net.Conn, chan struct{}) {
	t.Helper()
	up, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	jail, served := pair(t)
	done := make(chan struct{})
	go func() {
		h.Serve(dst, served, up)
		close(done)
	}()
	return jail, done
}

// TestServeSNI: to port 443, a ClientHello for the name goes through; one
// for another name is cut before a byte reaches the server, and recorded.
func TestServeSNI(t *testing.T) {
	got := make(chan []byte, 2)
	port := server(t, func(c net.Conn) {
		b, _ := io.ReadAll(c)
		got <- b
	})
	p, rr := newTestProxy(t, Config{Mode: "allowlist", Profile: "agent", Allow: []Allow{{Host: "api.test"}},
		Hosts: map[string]string{"api.test": "127.0.0.1"}})
	h := &transparent{p}
	dst := netip.AddrPortFrom(resolved(t, p, "api.test"), 443)

	jail, done := serveOne(t, h, dst, port)
	hello := clientHello("API.test")
	jail.Write(hello)
	jail.Write([]byte("more"))
	jail.(*net.TCPConn).CloseWrite()
	<-done
	if b := <-got; !bytes.Equal(b, append(hello, "more"...)) {
		t.Errorf("the server got %d bytes, want the hello and what followed (%d)", len(b), len(hello)+4)
	}

	jail, done = serveOne(t, h, dst, port)
	jail.Write(clientHello("evil.test"))
	<-done
	jail.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := jail.Read(make([]byte, 1)); err == nil {
		t.Errorf("the jail read %d bytes after a wrong SNI", n)
	}
	if b := <-got; len(b) != 0 {
		t.Errorf("the server got %d bytes of a connection with a wrong SNI", len(b))
	}
	want := []string{"network: refused api.test:443 (TLS SNI 'evil.test' is not the host asked for)"}
	if l := rr.refused(t); !slices.Equal(l, want) {
		t.Errorf("lines: %q, want %q", l, want)
	}
	denied, allowed := record(t, p, rr)
	if len(denied) != 1 || denied[0].Kind != kindTCP || len(allowed) != 1 || allowed[0].Host != "api.test" || allowed[0].Connections != 1 {
		t.Errorf("record: %+v, %+v", denied, allowed)
	}
}

// TestServeHost: to port 80, each request goes on only if its Host is the
// name, rewritten from what was parsed; a request for another host on the
// same connection cuts it, and is recorded.
func TestServeHost(t *testing.T) {
	hosts := make(chan string, 4)
	port := server(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			hosts <- req.Host + " " + req.Header.Get("User-Agent")
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	p, rr := newTestProxy(t, Config{Mode: "allowlist", Allow: []Allow{{Host: "api.test"}},
		Hosts: map[string]string{"api.test": "127.0.0.1"}})
	h := &transparent{p}
	dst := netip.AddrPortFrom(resolved(t, p, "api.test"), 80)
	jail, done := serveOne(t, h, dst, port)
	br := bufio.NewReader(jail)
	jail.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(jail, "POST /a HTTP/1.1\r\nHost: API.test:80\r\nContent-Length: 3\r\n\r\nabc")
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("first request: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	if got := <-hosts; got != "API.test:80 " {
		t.Errorf("the server read Host and User-Agent %q", got)
	}
	fmt.Fprintf(jail, "GET /b HTTP/1.1\r\nHost: evil.test\r\n\r\n")
	<-done
	if _, err := http.ReadResponse(br, nil); err == nil {
		t.Error("a request for evil.test got an answer")
	}
	select {
	case got := <-hosts:
		t.Errorf("the server read a request for %q", got)
	default:
	}
	want := []string{"network: refused api.test:80 (HTTP Host 'evil.test' is not the host asked for)"}
	if l := rr.refused(t); !slices.Equal(l, want) {
		t.Errorf("lines: %q, want %q", l, want)
	}
	// A connection whose first request is refused is not counted as let
	// through.
	jail, done = serveOne(t, h, dst, port)
	fmt.Fprintf(jail, "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n")
	<-done
	denied, allowed := record(t, p, rr)
	if len(allowed) != 1 || allowed[0].Connections != 1 || len(denied) != 1 || denied[0].Count != 2 {
		t.Errorf("record: %+v, %+v", denied, allowed)
	}
}

// TestServeUpgrade: after a WebSocket Upgrade the server agreed to, the
// connection is relayed raw both ways; one sent with more requests behind
// it does not switch (its answer might be framed out of step).
func TestServeUpgrade(t *testing.T) {
	port := server(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		fmt.Fprintf(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		io.Copy(c, br)
	})
	jail, _, _ := toAPITest80(t, port)
	fmt.Fprintf(jail, "GET /ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	br := bufio.NewReader(jail)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	fmt.Fprintf(jail, "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n")
	line, err := br.ReadString('\n')
	if err != nil || line != "GET / HTTP/1.1\r\n" {
		t.Errorf("after the upgrade the jail read %q, %v: want its own bytes echoed", line, err)
	}
}

// TestServeRaw: to another port the connection is relayed as is, and
// counted both ways.
func TestServeRaw(t *testing.T) {
	port := server(t, echo)
	p, rr := newTestProxy(t, Config{Mode: "allowlist", Allow: []Allow{{Host: "db.test", Port: 5432}},
		Hosts: map[string]string{"db.test": "127.0.0.1"}})
	jail, done := serveOne(t, &transparent{p}, netip.AddrPortFrom(resolved(t, p, "db.test"), 5432), port)
	data := bytes.Repeat([]byte("0123456789"), 100<<10) // 1 MB
	go func() {
		jail.Write(data)
		jail.(*net.TCPConn).CloseWrite()
	}()
	jail.SetReadDeadline(time.Now().Add(20 * time.Second))
	back, err := io.ReadAll(jail)
	if err != nil || !bytes.Equal(back, data) {
		t.Fatalf("read back %d bytes, %v", len(back), err)
	}
	<-done
	_, allowed := record(t, p, rr)
	want := []HostUse{{"db.test", 5432, 1, int64(len(data)), int64(len(data))}}
	if !slices.Equal(allowed, want) {
		t.Errorf("record: %+v, want %+v", allowed, want)
	}
}

// TestRefusedUDPAndOverload: a datagram through the TUN and a connection
// past the stack's limit are recorded, with their kinds, and said once.
func TestRefusedUDPAndOverload(t *testing.T) {
	p, rr := newTestProxy(t, Config{Mode: "allowlist", Allow: []Allow{{Host: "api.test"}},
		Hosts: map[string]string{"api.test": "127.0.0.1"}})
	h := &transparent{p}
	fake := resolved(t, p, "api.test")
	h.RefusedUDP(netip.MustParseAddrPort("8.8.8.8:53"))
	h.RefusedUDP(netip.MustParseAddrPort("8.8.8.8:53"))
	h.RefusedUDP(netip.AddrPortFrom(twin(fake), 443))
	h.Overloaded(netip.AddrPortFrom(fake, 443))
	want := []string{
		"network: refused udp 8.8.8.8:53 (only TCP leaves the jail)",
		"network: refused udp api.test:443 (only TCP leaves the jail)",
		"network: refused api.test:443 (too many connections)",
	}
	if l := rr.refused(t); !slices.Equal(l, want) {
		t.Errorf("lines:\n %q\nwant\n %q", l, want)
	}
	denied, _ := record(t, p, rr)
	wantRec := []HostDenial{
		{"8.8.8.8", 53, 2, "only TCP leaves the jail", "udp"},
		{"api.test", 443, 1, "only TCP leaves the jail", "udp"},
		{"api.test", 443, 1, "too many connections", "tcp"},
	}
	if !slices.Equal(denied, wantRec) {
		t.Errorf("record:\n %+v\nwant\n %+v", denied, wantRec)
	}
}

// TestPathsAgree: a program that resolved through the jail's resolver and
// then connects to the address through the stack, the HTTP proxy
// (CONNECT) or SOCKS gets the same refusal, said and recorded in the same
// words; and an allowed one reaches the name through each.
func TestPathsAgree(t *testing.T) {
	port := server(t, echo)
	cfg := Config{Mode: "allowlist", Profile: "agent", Allow: []Allow{{Host: "api.test", Port: port}},
		Hosts: map[string]string{"api.test": "127.0.0.1"}}
	type result struct {
		lines  []string
		denied []HostDenial
		used   []HostUse
	}
	paths := map[string]func(p *proxy, dst netip.AddrPort) error{}
	for name, open := range waysOut(t) {
		paths[name] = func(p *proxy, dst netip.AddrPort) error {
			c, err := open(p, dst)
			if err != nil {
				return err
			}
			return roundTrip(c)
		}
	}
	results := map[string]result{}
	for name, path := range paths {
		p, rr := newTestProxy(t, cfg)
		fake := resolved(t, p, "api.test")
		if err := path(p, netip.AddrPortFrom(fake, port)); err != nil {
			t.Errorf("%s to api.test:%d: %v", name, port, err)
		}
		if err := path(p, netip.AddrPortFrom(twin(fake), port)); err != nil {
			t.Errorf("%s to api.test:%d (v6): %v", name, port, err)
		}
		for _, dst := range []netip.AddrPort{netip.AddrPortFrom(fake, 22), netip.AddrPortFrom(fake.Next(), 443)} {
			if err := path(p, dst); err == nil {
				t.Errorf("%s to %s: let through", name, dst)
			}
		}
		// The refusals are said at once; the connections are counted
		// once both ends closed.
		r := result{lines: rr.refused(t)}
		for i := 0; i < 200; i++ {
			r.denied, r.used = record(t, p, rr)
			if len(r.used) == 1 && r.used[0].BytesIn == 12 && r.used[0].BytesOut == 12 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		results[name] = r
	}
	want := results["stack"]
	if len(want.lines) != 2 || len(want.denied) != 2 || len(want.used) != 1 || want.used[0].Host != "api.test" || want.used[0].Connections != 2 {
		t.Errorf("stack: %+v", want)
	}
	for name, r := range results {
		if !slices.Equal(r.lines, want.lines) || !slices.Equal(r.denied, want.denied) || !slices.Equal(r.used, want.used) {
			t.Errorf("%s:\n %+v\nstack:\n %+v", name, r, want)
		}
	}
	if !strings.Contains(strings.Join(want.lines, "\n"), "refused api.test:22 (not on the allowlist of profile agent; allow it with --allow api.test:22)") {
		t.Errorf("lines: %q", want.lines)
	}
}

// waysOut opens a connection to dst each way the jail has: through the
// stack, the HTTP proxy (CONNECT) and SOCKS; it returns the jail's end
// once the way out said it is open.
func waysOut(t *testing.T) map[string]func(p *proxy, dst netip.AddrPort) (net.Conn, error) {
	return map[string]func(p *proxy, dst netip.AddrPort) (net.Conn, error){
		"stack": func(p *proxy, dst netip.AddrPort) (net.Conn, error) {
			c, err := (&transparent{p}).Dial(dst)
			if err != nil {
				return nil, err
			}
			jail, served := pair(t)
			go (&transparent{p}).Serve(dst, served, c)
			return jail, nil
		},
		"http": func(p *proxy, dst netip.AddrPort) (net.Conn, error) {
			jail, served := pair(t)
			go p.serveHTTP(served)
			jail.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(jail, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", dst, dst)
			// Unbuffered: what follows the answer is the tunnel's.
			resp, err := http.ReadResponse(bufio.NewReaderSize(&oneByte{jail}, 16), &http.Request{Method: http.MethodConnect})
			if err != nil {
				return nil, err
			}
			if resp.StatusCode != 200 {
				return nil, fmt.Errorf("CONNECT: %s", resp.Status)
			}
			return jail, nil
		},
		"socks": func(p *proxy, dst netip.AddrPort) (net.Conn, error) {
			jail, served := pair(t)
			go p.serveSOCKS(served)
			jail.SetDeadline(time.Now().Add(10 * time.Second))
			req := []byte{5, 1, 0, 5, 1, 0}
			if dst.Addr().Is4() {
				req = append(req, 1)
			} else {
				req = append(req, 4)
			}
			req = append(req, dst.Addr().AsSlice()...)
			req = append(req, byte(dst.Port()>>8), byte(dst.Port()))
			jail.Write(req)
			rep := make([]byte, 12)
			if _, err := io.ReadFull(jail, rep); err != nil {
				return nil, err
			}
			if rep[3] != 0 {
				return nil, fmt.Errorf("SOCKS reply %d", rep[3])
			}
			return jail, nil
		},
	}
}

// redirect is a dialer that connects to another address than the one
// asked for, where the map says.
type redirect map[string]string

func (r redirect) Dial(network, address string) (net.Conn, error) {
	if to, ok := r[address]; ok {
		address = to
	}
	return net.Dial(network, address)
}

// oneByte reads at most a byte at a time.
type oneByte struct{ r io.Reader }

func (o *oneByte) Read(b []byte) (int, error) { return o.r.Read(b[:min(len(b), 1)]) }

// TestPathsCheckHost: to port 80 of a name, each way out checks each
// request's Host; one for another host is cut, said and recorded the
// same way.
func TestPathsCheckHost(t *testing.T) {
	hosts := make(chan string, 16)
	port := server(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			hosts <- req.Host
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	type result struct {
		lines  []string
		denied []HostDenial
	}
	results := map[string]result{}
	for name, open := range waysOut(t) {
		p, rr := newTestProxy(t, Config{Mode: "allowlist", Profile: "agent", Allow: []Allow{{Host: "api.test"}},
			Hosts: map[string]string{"api.test": "127.0.0.1"}})
		p.dialer = redirect{"127.0.0.1:80": fmt.Sprintf("127.0.0.1:%d", port)}
		jail, err := open(p, netip.AddrPortFrom(resolved(t, p, "api.test"), 80))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fmt.Fprintf(jail, "GET / HTTP/1.1\r\nHost: api.test\r\n\r\n")
		br := bufio.NewReader(jail)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", name, resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		fmt.Fprintf(jail, "GET / HTTP/1.1\r\nHost: secret-vhost.internal\r\n\r\n")
		if b, err := io.ReadAll(br); err != nil || len(b) != 0 {
			t.Errorf("%s: after a request for another host the jail read %q, %v", name, b, err)
		}
		if got := <-hosts; got != "api.test" {
			t.Errorf("%s: the server read Host %q", name, got)
		}
		select {
		case got := <-hosts:
			t.Errorf("%s: the server read a request for %q", name, got)
		default:
		}
		r := result{lines: rr.refused(t)}
		r.denied, _ = record(t, p, rr)
		results[name] = r
	}
	want := result{[]string{"network: refused api.test:80 (HTTP Host 'secret-vhost.internal' is not the host asked for)"},
		[]HostDenial{{"api.test", 80, 1, "HTTP Host 'secret-vhost.internal' is not the host asked for", "tcp"}}}
	for name, r := range results {
		if !slices.Equal(r.lines, want.lines) || !slices.Equal(r.denied, want.denied) {
			t.Errorf("%s:\n %+v\nwant\n %+v", name, r, want)
		}
	}
}

// roundTrip sends a line through an echo and reads it back, then closes.
func roundTrip(c net.Conn) error {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("hello\n")); err != nil {
		return err
	}
	b := make([]byte, 6)
	if _, err := io.ReadFull(c, b); err != nil {
		return err
	}
	if string(b) != "hello\n" {
		return fmt.Errorf("echo: %q", b)
	}
	return nil
}

// TestHTTPProxyFakeHost: a plain request through the HTTP proxy to a fake
// address reaches the name, and the server reads the name as its Host.
func TestHTTPProxyFakeHost(t *testing.T) {
	hosts := make(chan string, 1)
	port := server(t, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		hosts <- req.Host
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	})
	p, _ := newTestProxy(t, Config{Mode: "allowlist", Allow: []Allow{{Host: "api.test", Port: port}},
		Hosts: map[string]string{"api.test": "127.0.0.1"}})
	dst := netip.AddrPortFrom(resolved(t, p, "api.test"), port)
	jail, served := pair(t)
	go p.serveHTTP(served)
	jail.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(jail, "GET http://%s/x HTTP/1.1\r\nHost: %s\r\n\r\n", dst, dst)
	resp, err := http.ReadResponse(bufio.NewReader(jail), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	if got, want := <-hosts, fmt.Sprintf("api.test:%d", port); got != want {
		t.Errorf("the server read Host %q, want %q", got, want)
	}
}

// TestServeUpgradeIgnored: a server that ignores an Upgrade (or refuses a
// CONNECT) answers as to any request; the client's next request is
// checked like the first, not relayed raw.
func TestServeUpgradeIgnored(t *testing.T) {
	for first, why := range map[string]string{
		"GET /first HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n": "HTTP Host 'secret-vhost.internal' is not the host asked for",
		"GET /first HTTP/1.1\r\nHost: api.test\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n":       "HTTP Host 'secret-vhost.internal' is not the host asked for",
		"CONNECT api.test:80 HTTP/1.1\r\nHost: api.test\r\n\r\n":                                     "HTTP CONNECT to a server",
	} {
		paths := make(chan string, 4)
		port := server(t, func(c net.Conn) {
			br := bufio.NewReader(c)
			for {
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				paths <- req.Host
				fmt.Fprintf(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno")
			}
		})
		jail, rr, done := toAPITest80(t, port)
		fmt.Fprintf(jail, "%sGET /second HTTP/1.1\r\nHost: secret-vhost.internal\r\n\r\n", first)
		io.Copy(io.Discard, jail) // the first answer, maybe: the connection is cut
		ended(t, done)
		for len(paths) > 0 {
			if got := <-paths; got != "api.test" {
				t.Errorf("%q: the server read a request for %q", first, got)
			}
		}
		want := []string{"network: refused api.test:80 (" + why + ")"}
		if l := rr.refused(t); !slices.Equal(l, want) {
			t.Errorf("lines: %q, want %q", l, want)
		}
	}
}

// TestServePipelined: answers to requests sent before the first came
// (HEAD, with a length but no body; chunked; after a 100 Continue) reach
// the client as the server sent them.
func TestServePipelined(t *testing.T) {
	const answers = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" +
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"
	port := server(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for i := 0; i < 3; i++ {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
		}
		io.WriteString(c, answers)
		io.Copy(io.Discard, br)
	})
	jail, _, done := toAPITest80(t, port)
	fmt.Fprintf(jail, "HEAD / HTTP/1.1\r\nHost: api.test\r\n\r\nGET / HTTP/1.1\r\nHost: api.test\r\n\r\n"+
		"PUT / HTTP/1.1\r\nHost: api.test\r\nUpgrade: x\r\nConnection: upgrade\r\nContent-Length: 0\r\n\r\n")
	got := make([]byte, len(answers))
	if _, err := io.ReadFull(jail, got); err != nil || string(got) != answers {
		t.Errorf("the jail read %q, %v", got, err)
	}
	jail.(*net.TCPConn).CloseWrite()
	ended(t, done)
}

// ended waits for Serve to return, failing the test after 10 s.
func ended(t *testing.T, done chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
}

// TestServeBadRequests: a Host that is not the name (or the name and the
// port) exactly, a method that is not an upper-case token, and a WebSocket
// Upgrade with requests queued behind it are refused or not switched;
// other Upgrades (h2c) never reach the server.
func TestServeBadRequests(t *testing.T) {
	for req, why := range map[string]string{
		"GET / HTTP/1.1\r\nHost: [api.test]\r\n\r\n":    "HTTP Host '[api.test]' is not the host asked for",
		"GET / HTTP/1.1\r\nHost: api.test:abc\r\n\r\n":  "HTTP Host 'api.test:abc' is not the host asked for",
		"GET / HTTP/1.1\r\nHost: api.test:8080\r\n\r\n": "HTTP Host 'api.test:8080' is not the host asked for",
		"head / HTTP/1.1\r\nHost: api.test\r\n\r\n":     "HTTP method 'head' is not an upper-case token",
		"GET /ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n":               "HTTP Host 'evil.test' is not the host asked for",
		"GET / HTTP/1.1\r\nHost: api.test:80\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\nConnection: Upgrade, HTTP2-Settings\r\n\r\n": "",
	} {
		upgrades := make(chan string, 4)
		port := server(t, func(c net.Conn) {
			br := bufio.NewReader(c)
			for {
				r, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				upgrades <- r.Header.Get("Upgrade") + r.Header.Get("HTTP2-Settings")
				// Switches whatever it was asked: only the proxy decides.
				fmt.Fprintf(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
			}
		})
		jail, rr, done := toAPITest80(t, port)
		io.WriteString(jail, req)
		if why == "" {
			jail.(*net.TCPConn).CloseWrite()
		}
		io.Copy(io.Discard, jail)
		ended(t, done)
		var want []string
		if why != "" {
			want = []string{"network: refused api.test:80 (" + why + ")"}
		}
		if l := rr.refused(t); !slices.Equal(l, want) {
			t.Errorf("%q: lines %q, want %q", req, l, want)
		}
		for len(upgrades) > 0 {
			if u := <-upgrades; u != "" && !strings.HasPrefix(req, "GET /ws") {
				t.Errorf("%q: the server read Upgrade %q", req, u)
			}
		}
	}
}

// toAPITest80 is a jail's connection through the stack to api.test:80 (a
// listed name, pinned to the test server on port), with ten seconds to
// run, the report's reader, and what says its Serve ended.
func toAPITest80(t *testing.T, port uint16) (net.Conn, *reportReader, chan struct{}) {
	t.Helper()
	p, rr := newTestProxy(t, Config{Mode: "allowlist", Allow: []Allow{{Host: "api.test"}},
		Hosts: map[string]string{"api.test": "127.0.0.1"}})
	jail, done := serveOne(t, &transparent{p}, netip.AddrPortFrom(resolved(t, p, "api.test"), 80), port)
	jail.SetDeadline(time.Now().Add(10 * time.Second))
	return jail, rr, done
}
