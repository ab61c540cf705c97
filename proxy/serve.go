// The proxies the jail can name: HTTP (plain requests and CONNECT) and
// SOCKS5, on the listeners PID 1 made on the jail's loopback.

package proxy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// serveHTTP answers one client of the HTTP proxy: a CONNECT tunnel, or a
// plain http:// request forwarded (one per connection).
func (p *proxy) serveHTTP(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	// The request line and headers are bounded; what follows (a body, a
	// tunnel's bytes) is read as it comes.
	lim := &io.LimitedReader{R: c, N: maxHeader}
	br := bufio.NewReader(lim)
	req, err := http.ReadRequest(br)
	if err != nil {
		if lim.N <= 0 {
			httpError(c, 431, "request headers too large")
		}
		return
	}
	lim.N = 1 << 62
	c.SetReadDeadline(time.Time{})
	if req.Method == http.MethodConnect {
		p.connect(c, br, req.Host)
		return
	}
	if req.URL.Scheme != "http" || req.URL.Host == "" {
		httpError(c, 400, "a proxy request wants an absolute http:// URL (https goes through CONNECT)")
		return
	}
	host, port := req.URL.Hostname(), uint16(80)
	if ps := req.URL.Port(); ps != "" {
		n, err := strconv.ParseUint(ps, 10, 16)
		if err != nil || n == 0 {
			httpError(c, 400, "bad port")
			return
		}
		port = uint16(n)
	}
	if port == 443 {
		// Port 443 is TLS, through CONNECT, where its SNI is checked.
		p.deny(kindTCP, p.named(host, port), "plain HTTP to port 443")
		httpError(c, 403, "jail: not allowed: plain HTTP to port 443 (use CONNECT)")
		return
	}
	server, t, err := p.dial(host, port)
	if err != nil {
		refuse(c, err)
		return
	}
	defer server.Close()
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	p.noteMisuse(t.Host, req.Header, req.RequestURI)
	req.RequestURI = ""
	req.Close = true
	if h, err := netip.ParseAddr(strings.Trim(req.URL.Hostname(), "[]")); err == nil && isFake(h) {
		// The server knows its name, not the jail's fake address.
		req.Host = t.Host
		if port != 80 {
			req.Host = net.JoinHostPort(t.Host, strconv.Itoa(int(port)))
		}
	}
	// Hop-by-hop headers are this hop's (Write adds its own Connection),
	// and trailers are not forwarded (a Host among them is not the one
	// checked), as relayHTTP.
	for _, h := range []string{"Connection", "Keep-Alive", "Upgrade", "HTTP2-Settings", "TE", "Trailer"} {
		req.Header.Del(h)
	}
	req.Trailer = nil
	if _, ok := req.Header["User-Agent"]; !ok {
		// Written as the client sent it: without one (Write would add
		// Go's), as relayHTTP does.
		req.Header["User-Agent"] = []string{""}
	}
	// One request per connection: its body goes up while the answer
	// comes back (a server may answer before it has the body: a 413 or a
	// 401, then close), and nothing else the client sends on it is
	// forwarded. The answer is relayed as relay's are: counted as it
	// passes, its end passed on (a reset as a reset). The end of a run
	// waits for the request to be written, as relay does for the jail's
	// side. A body cut short (the jail's reset) lacks its framing's end,
	// which the server sees: closed, not reset, so that what was counted
	// still reaches it.
	a := p.track(t)
	answered := make(chan struct{})
	up := &progress{}
	go func() {
		defer close(answered)
		p.pass(c, server, a, true, up)
	}()
	body := &firstErr{r: req.Body}
	if req.Body != http.NoBody {
		// (NoBody is how Write knows a request has no body at all.)
		req.Body = struct {
			io.Reader
			io.Closer
		}{body, req.Body}
	}
	cw := &countWriter{w: watched{server, up}}
	end := p.relays.start(server)
	err = req.Write(cw)
	p.count(a, 0, cw.n)
	end()
	switch {
	case body.err != nil:
		server.Close() // the jail's side failed: no answer is awaited
	case err == nil:
		closeWrite(server)
	}
	// Else the server failed the body, and what it answered first is
	// still to be read.
	<-answered
}

// connect opens a tunnel to hostport, checked as serveConn checks.
func (p *proxy) connect(c net.Conn, br *bufio.Reader, hostport string) {
	host, ps, err := net.SplitHostPort(hostport)
	n, perr := strconv.ParseUint(ps, 10, 16)
	if err != nil || perr != nil || n == 0 {
		httpError(c, 400, "CONNECT wants HOST:PORT")
		return
	}
	port := uint16(n)
	server, t, err := p.dial(host, port)
	if err != nil {
		refuse(c, err)
		return
	}
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		server.Close()
		return
	}
	p.serveConn(t, c, server, br)
}

// checkTLS, for port 443, reads the client's ClientHello and checks its
// SNI is the name it asked for (an IP literal, already named on the list,
// has no SNI to compare); it returns what it read and the client sent
// after, to send on.
func (p *proxy) checkTLS(c net.Conn, br *bufio.Reader, t target) ([]byte, bool) {
	var first []byte
	if t.Port == 443 {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		hello, sni, err := readClientHello(br)
		c.SetReadDeadline(time.Time{})
		_, ipErr := netip.ParseAddr(strings.Trim(t.Host, "[]"))
		why := ""
		switch {
		case err != nil && ipErr != nil:
			why = "no TLS ClientHello with SNI: " + err.Error()
		case ipErr != nil && normal(sni) != t.Host:
			why = "TLS SNI '" + recordable(sni, maxName) + "' is not the host asked for"
		}
		if why != "" {
			p.deny(kindTCP, t, why)
			return nil, false
		}
		first = hello
	}
	if k := br.Buffered(); k > 0 {
		rest, _ := br.Peek(k)
		first = append(first, rest...)
	}
	return first, true
}

func httpError(c net.Conn, code int, msg string) {
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n",
		code, http.StatusText(code), len(msg)+1, msg)
}

// refuse answers a refused or failed dial: 403 for the policy, 502 else.
func refuse(c net.Conn, err error) {
	var d *errDenied
	if errors.As(err, &d) {
		httpError(c, 403, "jail: not allowed: "+d.reason)
		return
	}
	httpError(c, 502, "jail: "+err.Error())
}

// readClientHello reads the first TLS record, which must hold a whole
// ClientHello, and returns it and its server name.
func readClientHello(r *bufio.Reader) ([]byte, string, error) {
	head, err := r.Peek(5)
	if err != nil {
		return nil, "", err
	}
	if head[0] != 0x16 {
		return nil, "", errors.New("not a TLS handshake")
	}
	n := int(binary.BigEndian.Uint16(head[3:5]))
	rec := make([]byte, 5+n)
	if _, err := io.ReadFull(r, rec); err != nil {
		return nil, "", err
	}
	sni, err := serverName(rec[5:])
	return rec, sni, err
}

// serverName finds the server_name extension in a ClientHello.
func serverName(b []byte) (string, error) {
	bad := errors.New("malformed ClientHello")
	if len(b) < 4 || b[0] != 1 {
		return "", bad
	}
	l := int(b[1])<<16 | int(b[2])<<8 | int(b[3])
	if l > len(b)-4 {
		return "", errors.New("ClientHello spans records")
	}
	b = b[4 : 4+l]
	skip := func(n int) bool {
		if n > len(b) {
			return false
		}
		b = b[n:]
		return true
	}
	vec := func(lenBytes int) bool {
		if len(b) < lenBytes {
			return false
		}
		n := 0
		for i := 0; i < lenBytes; i++ {
			n = n<<8 | int(b[i])
		}
		return skip(lenBytes + n)
	}
	if !skip(2+32) || !vec(1) || !vec(2) || !vec(1) || len(b) < 2 {
		return "", bad
	}
	ext := b[2:]
	if el := int(binary.BigEndian.Uint16(b)); el <= len(ext) {
		ext = ext[:el]
	}
	for len(ext) >= 4 {
		typ, n := binary.BigEndian.Uint16(ext), int(binary.BigEndian.Uint16(ext[2:]))
		if 4+n > len(ext) {
			return "", bad
		}
		data := ext[4 : 4+n]
		ext = ext[4+n:]
		if typ != 0 {
			continue
		}
		if len(data) < 5 || data[2] != 0 {
			return "", bad
		}
		nl := int(binary.BigEndian.Uint16(data[3:]))
		if 5+nl > len(data) {
			return "", bad
		}
		return string(data[5 : 5+nl]), nil
	}
	return "", errors.New("no server name")
}

// serveSOCKS answers one SOCKS5 client: no authentication, CONNECT only.
func (p *proxy) serveSOCKS(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	br := bufio.NewReader(c)
	hdr := make([]byte, 2)
	if _, err := io.ReadFull(br, hdr); err != nil || hdr[0] != 5 {
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return
	}
	if !strings.ContainsRune(string(methods), 0) {
		c.Write([]byte{5, 0xff})
		return
	}
	c.Write([]byte{5, 0})
	req := make([]byte, 4)
	if _, err := io.ReadFull(br, req); err != nil || req[0] != 5 {
		return
	}
	var host string
	switch req[3] {
	case 1, 4:
		ip := make([]byte, map[byte]int{1: 4, 4: 16}[req[3]])
		if _, err := io.ReadFull(br, ip); err != nil {
			return
		}
		a, _ := netip.AddrFromSlice(ip)
		host = a.Unmap().String()
	case 3:
		l, err := br.ReadByte()
		if err != nil {
			return
		}
		name := make([]byte, l)
		if _, err := io.ReadFull(br, name); err != nil {
			return
		}
		host = string(name)
	default:
		socksReply(c, 8)
		return
	}
	pb := make([]byte, 2)
	if _, err := io.ReadFull(br, pb); err != nil {
		return
	}
	port := binary.BigEndian.Uint16(pb)
	if req[1] != 1 {
		socksReply(c, 7)
		return
	}
	c.SetReadDeadline(time.Time{})
	server, t, err := p.dial(host, port)
	if err != nil {
		var d *errDenied
		if errors.As(err, &d) {
			socksReply(c, 2) // not allowed by ruleset
		} else {
			socksReply(c, 5)
		}
		return
	}
	socksReply(c, 0)
	p.serveConn(t, c, server, br)
}

func socksReply(c net.Conn, code byte) {
	c.Write([]byte{5, code, 0, 1, 0, 0, 0, 0, 0, 0})
}
