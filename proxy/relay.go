// Relaying an accepted connection to its destination, counted: raw, or
// plain HTTP with each request's Host checked against the destination.

package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
)

// closeWriter is a connection that can end one direction (TCP, and the
// stack's connections).
type closeWriter interface{ CloseWrite() error }

func closeWrite(c net.Conn) {
	if cw, ok := c.(closeWriter); ok {
		cw.CloseWrite()
	}
}

// aborter is a connection that can end with a reset: the stack's, and a
// dialled one.
type aborter interface{ Abort() }

// abort ends c with a reset where it can, so that its peer learns the
// connection failed rather than ended: data cut short by a reset on one
// side must not look whole on the other. Else it closes c.
func abort(c net.Conn) {
	switch c := c.(type) {
	case aborter:
		c.Abort()
	case *net.TCPConn:
		c.SetLinger(0)
	}
	c.Close()
}

// relay copies both ways until both sides end, counting bytes; first is
// what the client sent that was already read. Each side's end is passed
// on as it came: a clean end (EOF) as the end of that direction only, so
// the other goes on (a half-close), and a reset as a reset of the other
// side. A write that fails ends that direction: the other may still hold
// data on its way.
func (p *proxy) relay(t target, client net.Conn, server net.Conn, first []byte) {
	// The end of a run waits for the jail's side only: what the server
	// still sends has no one to read it.
	end := p.relays.start(server)
	a := p.track(t)
	if len(first) > 0 {
		n, _ := server.Write(first)
		p.count(a, 0, int64(n))
	}
	up := &progress{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer end()
		p.pass(server, client, a, false, up)
	}()
	if p.pass(client, server, a, true, up) {
		p.halfOpen(done, client, server, up)
	}
	<-done
	client.Close()
	server.Close()
}

// pass copies src to dst as relay does, and passes src's end on to dst.
// up is the jail's side (nil: not followed): the jail's side itself
// (down false) has its writes to the server followed in it; the server's
// side (down true) asks it, at a clean end, whether that end hides the
// server's reset. It reports whether src ended cleanly (and dst took all
// of it).
func (p *proxy) pass(dst, src net.Conn, a *allowedStat, down bool, up *progress) bool {
	var watch *progress
	if !down {
		watch = up
	}
	readErr, writeErr := p.pipe(dst, src, a, down, watch)
	switch {
	case writeErr != nil:
		// dst failed: its own end reaches its peer; the copy the other
		// way ends when src does.
		return false
	case readErr != nil, down && up != nil && up.resetSeen():
		abort(dst)
		src.Close()
		return false
	}
	closeWrite(dst)
	return true
}

// relayIdle is what relayCopy reads into while a connection is quiet,
// or while flow's budget is spent: 16 KiB each way of at most 512
// connections (the stack's 256 and the proxies' 256) is 16 MiB.
const relayIdle = 16 << 10

// pipe copies src to dst until either ends, counting the bytes into a as
// they pass (down: from the server), so a report made while the
// connection is open, or as the run ends, has them; watch (nil: none)
// follows the writes. It returns what relayCopy does.
func (p *proxy) pipe(dst, src net.Conn, a *allowedStat, down bool, watch *progress) (readErr, writeErr error) {
	var w io.Writer = dst
	if watch != nil {
		w = watched{dst, watch}
	}
	return relayCopy(w, src, func(n int) {
		if down {
			p.count(a, int64(n), 0)
		} else {
			p.count(a, 0, int64(n))
		}
	}, p.pieces)
}

// relayCopy copies src to dst until either ends or fails, telling count
// what each write wrote. Once a read fills its small buffer, data flows,
// and flow takes over (with pieces from ps) until it slows. It returns
// src's error (nil for its end, EOF) or dst's: the first that stopped it.
func relayCopy(dst io.Writer, src io.Reader, count func(int), ps *pieceStore) (readErr, writeErr error) {
	buf := make([]byte, relayIdle)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			w, werr := dst.Write(buf[:n])
			count(w)
			if werr != nil {
				return nil, werr
			}
		}
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return err, nil
		}
		if n == len(buf) {
			if ended, readErr, writeErr := flow(dst, src, count, ps); ended {
				return readErr, writeErr
			}
		}
	}
}

// relayHTTP relays plain HTTP to t, request by request, each only if its
// Host is t's name: one server often answers for many names (virtual
// hosting), and the list allows one. Each request is written anew from
// what was parsed, so the server reads the Host that was checked. A
// request for another host cuts the connection, and is recorded.
//
// The rest goes through raw only once the server agreed to a WebSocket:
// the connection's first request asked for it, alone, and the server
// answered 101. Until its answer the client is not read; a server that
// ignores the Upgrade leaves the next request to be checked like the
// first. Any other Upgrade (h2c would carry requests for any host in
// HTTP/2) is taken out of the request, and CONNECT, which nothing
// legitimate sends an origin server, is refused: an origin answering it
// 2xx goes on reading HTTP. The client is read through cbr, which may
// hold what it sent already.
func (p *proxy) relayHTTP(t target, client, server net.Conn, cbr *bufio.Reader) {
	// Counted till the jail's side ended, as relay's.
	end := p.relays.start(server)
	var a *allowedStat // counted from its first request let through
	down := &countWriter{w: client}
	queue := make(chan asked, maxPipelined)
	lost := make(chan struct{})
	done := make(chan struct{})
	var aborted atomic.Bool // the jail's side, for the server's reset
	sent := &progress{}     // the jail's side's writes
	go func() {
		if err := p.responses(server, down, queue, lost); err != nil || sent.resetSeen() {
			aborted.Store(true)
			abort(client)
		} else {
			closeWrite(client)
		}
		close(done)
	}()
	up := &countWriter{w: watched{server, sent}}
	jail := &firstErr{r: cbr}
	lim := &io.LimitedReader{R: jail, N: maxHeader}
	br := bufio.NewReader(lim)
	for first := true; ; first = false {
		// The request line and headers are bounded; a body is read as
		// it comes.
		lim.N = maxHeader
		req, err := http.ReadRequest(br)
		if err != nil {
			if err != io.EOF && jail.err == nil && !aborted.Load() {
				why := "not an HTTP request"
				if lim.N <= 0 {
					why = "HTTP request headers too large"
				}
				p.deny(kindTCP, t, why)
				server.Close()
			}
			break
		}
		lim.N = 1 << 62
		if why := p.badRequest(req, t); why != "" {
			p.deny(kindTCP, t, why)
			server.Close()
			break
		}
		p.noteMisuse(t.Host, req.Header, req.RequestURI)
		if a == nil {
			a = p.track(t)
		}
		if _, ok := req.Header["User-Agent"]; !ok {
			// Written as the client sent it: without one (Write would
			// add Go's).
			req.Header["User-Agent"] = []string{""}
		}
		// Trailers are not forwarded: a Host among them is not the one
		// checked.
		req.Header.Del("Trailer")
		req.Trailer = nil
		q := asked{req: req}
		if websocket(req) && first && br.Buffered() == 0 {
			q.agreed = make(chan bool, 1)
		} else {
			req.Header.Del("Upgrade")
			req.Header.Del("HTTP2-Settings")
		}
		// Queued before it is written: the answer may come before the
		// body is sent.
		select {
		case queue <- q:
		case <-lost:
			q.agreed = nil // no answer is read: never raw
		}
		if err := req.Write(up); err != nil {
			break
		}
		if q.agreed == nil {
			continue
		}
		agreed := false
		select {
		case agreed = <-q.agreed:
		case <-lost:
		}
		if agreed {
			io.Copy(up, br)
			break
		}
	}
	if jail.err != nil {
		abort(server) // the jail's reset, maybe within a body
	} else {
		closeWrite(server)
	}
	if a != nil {
		p.count(a, 0, up.n)
	}
	end()
	<-done
	client.Close()
	server.Close()
	if a != nil {
		p.count(a, down.n, 0)
	}
}

// maxPipelined bounds the requests sent whose answer has not come: the
// client is read no further until one comes.
const maxPipelined = 64

// asked is a request sent to the server, for responses to read its answer
// as: agreed, for one asking to switch protocols, is told whether the
// server did.
type asked struct {
	req    *http.Request
	agreed chan bool
}

// badRequest says why req may not go to t, or "": its Host must be t's
// name, or the name and t's port, exactly (a server routes a Host it does
// not know to its default site, another than the name); its method an
// upper-case token, as servers read methods differently otherwise (and
// then frame their answers differently); and not CONNECT.
func (p *proxy) badRequest(req *http.Request, t target) string {
	host, port := req.Host, ""
	if h, pt, err := net.SplitHostPort(host); err == nil {
		host, port = h, pt
	}
	if normal(host) != t.Host || strings.ContainsAny(req.Host, "[]") || port != "" && port != strconv.Itoa(int(t.Port)) {
		return fmt.Sprintf("HTTP Host '%s' is not the host asked for", recordable(req.Host, maxName))
	}
	if req.Method == http.MethodConnect {
		return "HTTP CONNECT to a server"
	}
	for _, c := range req.Method {
		if c < 'A' || c > 'Z' {
			return fmt.Sprintf("HTTP method '%s' is not an upper-case token", recordable(req.Method, 32))
		}
	}
	return ""
}

// websocket reports whether req asks to switch to a WebSocket, the one
// Upgrade let through: its only Upgrade token, which the Connection
// header names (else a server must ignore it).
func websocket(req *http.Request) bool {
	if up := req.Header.Values("Upgrade"); len(up) != 1 || !strings.EqualFold(strings.TrimSpace(up[0]), "websocket") {
		return false
	}
	for _, v := range req.Header.Values("Connection") {
		for _, tok := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "upgrade") {
				return true
			}
		}
	}
	return false
}

// responses copies the server's bytes to the client as they come, and
// reads them as the answers to the requests queued, in order, to tell a
// request that asked to switch whether the server agreed. Once the
// server switched, or sent what it was not asked for or is not HTTP, the
// rest is copied raw; lost is closed unless the server switched, so no
// later request waits on an answer and none goes raw. It returns how the
// server's side failed (a reset), or nil for its end.
func (p *proxy) responses(server net.Conn, client io.Writer, queue chan asked, lost chan struct{}) error {
	src := &firstErr{r: server}
	lim := &io.LimitedReader{R: io.TeeReader(src, client), N: maxHeader}
	br := bufio.NewReader(lim)
	buf := make([]byte, 64<<10)
	for {
		if _, err := br.Peek(1); err != nil {
			break
		}
		var q asked
		select {
		case q = <-queue:
		default: // an answer to nothing asked
		}
		if q.req == nil {
			break
		}
		resp, err := readFinal(br, lim, q.req)
		if err != nil {
			break
		}
		if q.agreed != nil {
			if resp.StatusCode == http.StatusSwitchingProtocols {
				q.agreed <- true
				io.Copy(client, src) // what br holds was copied as read
				return src.err
			}
			q.agreed <- false
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			break // switched unasked: the rest is not HTTP
		}
		lim.N = 1 << 62
		// Read (so copied) in large pieces: Discard's ReadFrom, hidden,
		// would read 8 KiB at a time.
		if _, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, resp.Body, buf); err != nil {
			break
		}
	}
	close(lost)
	io.Copy(client, src)
	return src.err
}

// firstErr reads r, keeping the first error it gave but EOF and a read
// of a connection closed here (a request refused is cut so): how the
// connection failed (a reset), which a socket reports once, and which a
// parser or a copy above it may hide or take for its own.
type firstErr struct {
	r   io.Reader
	err error
}

func (f *firstErr) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	if err != nil && err != io.EOF && !errors.Is(err, net.ErrClosed) && f.err == nil {
		f.err = err
	}
	return n, err
}

// readFinal reads the answer to req, past interim (1xx) responses but
// 101; its header is bounded.
func readFinal(br *bufio.Reader, lim *io.LimitedReader, req *http.Request) (*http.Response, error) {
	for {
		lim.N = maxHeader
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode/100 != 1 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
	}
}

// serveConn relays a connection the policy let through to t, from any of
// the ways out (the stack, CONNECT, SOCKS), so each checks the same: to
// port 443 after the ClientHello's SNI proved to be the name, to port 80
// request by request with each Host checked, to other ports raw (the list
// named the port). An address the list names has no name to check
// against: raw too. A host a credential is bound to is intercepted
// instead (intercept). The client is read through br, which may hold what
// it sent already.
func (p *proxy) serveConn(t target, client, server net.Conn, br *bufio.Reader) {
	if _, err := netip.ParseAddr(t.Host); err != nil && t.Port == 80 {
		p.relayHTTP(t, client, server, br)
		return
	}
	if p.creds.boundTo(normal(t.Host)) != nil {
		p.intercept(t, client, server, br)
		return
	}
	first, ok := p.checkTLS(client, br, t)
	if !ok {
		client.Close()
		server.Close()
		return
	}
	p.relay(t, client, server, first)
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
