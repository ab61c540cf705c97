// The HTTP side of an intercepted connection: Go's net/http serves the
// jail's requests (HTTP/2 or 1.1), each is checked, the values of the
// credentials bound to the host go into its headers, and it is forwarded
// to the real server over TLS that verifies it; the record counts what
// was injected, and where a placeholder went that it is not bound to.

package proxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// session is an intercepted connection's requests, to one host, and the
// connections to its real server they opened.
type session struct {
	p     *proxy
	t     target
	bound []*Credential
	// authority is the real server's, as the requests' URLs name it.
	authority string
	tr        *http.Transport
	log       *log.Logger

	mu sync.Mutex
	// server is the connection the policy dialed for the jail's, for
	// the first request; nil once taken.
	server   net.Conn
	dialed   time.Time
	handlers int
	idle     *sync.Cond // handlers fell to 0
	// done is closed when the session ends: a dial still waiting for an
	// upstream token gives up (the Transport's dials outlive the
	// requests that caused them).
	done chan struct{}
}

func (p *proxy) newSession(t target, server net.Conn, dialed time.Time) *session {
	s := &session{p: p, t: t, bound: p.creds.boundTo(t.Host), authority: t.Host,
		server: server, dialed: dialed, log: log.New(io.Discard, "", 0)}
	if t.Port != 443 {
		s.authority = net.JoinHostPort(t.Host, strconv.Itoa(int(t.Port)))
	}
	s.idle = sync.NewCond(&s.mu)
	s.done = make(chan struct{})
	s.tr = &http.Transport{
		DialContext: s.dial,
		// Verified against the host's roots and network.upstream_ca,
		// as the name: what the jail would have checked.
		TLSClientConfig:        &tls.Config{RootCAs: p.creds.roots(), ServerName: t.Host, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		IdleConnTimeout:        30 * time.Second,
		MaxConnsPerHost:        maxStreams,
		MaxResponseHeaderBytes: 1 << 20,
		// The jail's Accept-Encoding and the server's encoding go
		// through as they are.
		DisableCompression: true,
	}
	return s
}

// serve serves the requests on tc, HTTP/2 when the jail chose it, until
// the connection ends and its last request is done.
func (s *session) serve(tc *tls.Conn) {
	gone := make(chan struct{})
	var once sync.Once
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    maxHeader,
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: maxStreams},
		ErrorLog:          s.log,
		ConnState: func(_ net.Conn, st http.ConnState) {
			// A hijacked connection (a WebSocket) is its handler's
			// until it returns.
			if st == http.StateClosed || st == http.StateHijacked {
				once.Do(func() { close(gone) })
			}
		},
	}
	srv.Serve(&oneConn{c: tc, gone: gone})
	s.mu.Lock()
	for s.handlers > 0 {
		s.idle.Wait()
	}
	server := s.server
	s.server = nil
	s.mu.Unlock()
	close(s.done)
	s.tr.CloseIdleConnections()
	if server != nil {
		server.Close()
	}
}

// oneConn is a listener that gives one connection, then waits for it to
// be gone before it says it is closed (http.Server.Serve returns then).
type oneConn struct {
	c     net.Conn
	gone  chan struct{}
	given bool
}

func (l *oneConn) Accept() (net.Conn, error) {
	if !l.given {
		l.given = true
		return l.c, nil
	}
	<-l.gone
	return nil, net.ErrClosed
}

func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return l.c.LocalAddr() }

// dial is the transport's: the connection the policy dialed for the
// jail's first, then new ones through the same policy.
func (s *session) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	// A token per connection open, across sessions. The Transport dials
	// apart from the request that asked (its ctx ends only with the
	// session), so a dial waits at most tokenWait: one its request gave
	// up on does not queue for long ahead of live ones.
	wait := time.NewTimer(tokenWait)
	defer wait.Stop()
	select {
	case s.p.upstreams <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		return nil, net.ErrClosed
	case <-wait.C:
		return nil, errors.New("too many connections to real servers at once")
	}
	release := sync.OnceFunc(func() { <-s.p.upstreams })
	s.mu.Lock()
	c := s.server
	s.server = nil
	s.mu.Unlock()
	if c != nil && time.Since(s.dialed) > preDialedFresh {
		c.Close()
		c = nil
	}
	if c == nil {
		var err error
		if c, _, err = s.p.dial(s.t.Host, s.t.Port); err != nil {
			release()
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil { // the client went while it dialed
		c.Close()
		release()
		return nil, err
	}
	return &countedConn{Conn: c, p: s.p, a: s.p.track(s.t), release: release}, nil
}

// ServeHTTP forwards one request of the jail's to the real server, with
// the values of the credentials bound to the host in its headers.
func (s *session) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	s.handlers++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.handlers--; s.handlers == 0 {
			s.idle.Broadcast()
		}
		s.mu.Unlock()
	}()
	// The same checks as a request to port 80: one server answers for
	// many names, and the value goes only to this one.
	if why := s.p.badRequest(req, s.t); why != "" {
		s.p.deny(kindTCP, s.t, why)
		code := http.StatusBadRequest
		if host, _, err := net.SplitHostPort(req.Host); err != nil && normal(req.Host) != s.t.Host || err == nil && normal(host) != s.t.Host {
			code = http.StatusMisdirectedRequest
		}
		http.Error(w, "jail: not allowed: "+why, code)
		return
	}
	if !websocket(req) {
		// Another protocol (h2c) would carry requests for any host.
		req.Header.Del("Upgrade")
	}
	var used []*CredentialUse
	rp := &httputil.ReverseProxy{
		Transport: s.tr,
		ErrorLog:  s.log,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "https"
			pr.Out.URL.Host = s.authority
			// userinfo in an absolute-form target: Go's Transport would
			// make it an Authorization header of its own.
			pr.Out.URL.User = nil
			s.p.noteMisuse(s.t.Host, pr.Out.Header, pr.In.RequestURI)
			if sub := substitute(pr.Out.Header, s.bound); len(sub) > 0 {
				used = s.p.credUsed(sub, s.t.Host)
				if pr.Out.Body != nil {
					pr.Out.Body = &countedBody{pr.Out.Body, func(n int64) { s.p.countCred(used, n, 0) }}
				}
			}
		},
		ModifyResponse: func(resp *http.Response) error {
			// A switched connection's body is the connection, which
			// must stay writable.
			if len(used) > 0 && resp.StatusCode != http.StatusSwitchingProtocols {
				resp.Body = &countedBody{resp.Body, func(n int64) { s.p.countCred(used, 0, n) }}
			}
			return nil
		},
		ErrorHandler: s.failed,
	}
	rp.ServeHTTP(w, req)
}

// failed answers a request the real server did not: 502, and when its
// certificate did not verify, a refusal recorded and said.
func (s *session) failed(w http.ResponseWriter, _ *http.Request, err error) {
	var cv *tls.CertificateVerificationError
	var d *errDenied
	switch {
	case errors.As(err, &cv):
		why := "the real server's certificate did not verify: " + certProblem(cv.Err)
		s.p.deny(kindTCP, s.t, why)
		http.Error(w, fmt.Sprintf("jail: %s is intercepted to inject a credential, and %s "+
			"(jail verifies it against the host's system roots and network.upstream_ca)", s.t.Host, why), http.StatusBadGateway)
	case errors.As(err, &d):
		// Recorded by the policy.
		http.Error(w, "jail: not allowed: "+d.reason, http.StatusBadGateway)
	case errors.Is(err, context.Canceled):
		w.WriteHeader(http.StatusBadGateway) // the jail is gone
	default:
		http.Error(w, "jail: "+s.t.Host+": "+err.Error(), http.StatusBadGateway)
	}
}

// certProblem says, in fixed words, why a certificate did not verify.
func certProblem(err error) string {
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	switch {
	case errors.As(err, &ua):
		return "signed by an authority neither the system roots nor network.upstream_ca hold"
	case errors.As(err, &he):
		return "not valid for the name"
	case errors.As(err, &ci) && ci.Reason == x509.Expired:
		return "expired or not yet valid"
	}
	return "not valid"
}

// substitute puts each bound credential's value in place of its
// placeholder in h, and returns the credentials it put in. Only in the
// header the binding names, or, naming none, in a header meant for a
// credential (keyHeader); and only where the placeholder is the whole
// value or the credential after an auth scheme ("Bearer PLACEHOLDER").
// Elsewhere it goes unchanged: a server that echoes a header it did not
// expect ("no such organization: ...") would hand the value back to the
// jail.
func substitute(h http.Header, bound []*Credential) []*Credential {
	var used []*Credential
	for _, c := range bound {
		hit := false
		for k, vs := range h {
			if c.Header != "" && !strings.EqualFold(k, c.Header) || c.Header == "" && !keyHeader(k) {
				continue
			}
			for i, v := range vs {
				if nv, ok := inPlace(v, c.Placeholder, c.Value); ok {
					vs[i] = nv
					hit = true
				}
			}
		}
		if hit {
			used = append(used, c)
		}
	}
	return used
}

// keyHeader reports whether a header is named as the ones APIs take a
// key in: Authorization, and names ending in key, token, secret or auth
// (X-Api-Key, Api-Key, X-Goog-Api-Key, Private-Token, X-Auth-Token).
func keyHeader(name string) bool {
	n := strings.ToLower(name)
	if n == "authorization" {
		return true
	}
	for _, w := range []string{"key", "apikey", "token", "secret", "auth"} {
		if n == w || strings.HasSuffix(n, "-"+w) {
			return true
		}
	}
	return false
}

// inPlace returns v with value for placeholder when the placeholder is
// all of v or the one word after a scheme; ok false otherwise.
func inPlace(v, placeholder, value string) (string, bool) {
	t := strings.TrimSpace(v)
	if t == placeholder {
		return value, true
	}
	scheme, rest, found := strings.Cut(t, " ")
	if found && scheme != "" && strings.TrimSpace(rest) == placeholder {
		return scheme + " " + value, true
	}
	return "", false
}

// noteMisuse counts each placeholder a request to host carries, in its
// headers or its target, whose variable is not bound to host: it goes
// unchanged, and the record tells the operator it was tried.
func (p *proxy) noteMisuse(host string, h http.Header, uri string) {
	if p.creds == nil {
		return
	}
	for _, c := range p.creds.all {
		if slices.Contains(c.Hosts, host) {
			continue
		}
		if strings.Contains(uri, c.Placeholder) || inValues(h, c.Placeholder) {
			p.credMisused(c, host)
		}
	}
}

func inValues(h http.Header, s string) bool {
	for _, vs := range h {
		for _, v := range vs {
			if strings.Contains(v, s) {
				return true
			}
		}
	}
	return false
}

// countedBody is a body whose bytes are counted as they are read.
type countedBody struct {
	io.ReadCloser
	add func(int64)
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.add(int64(n))
	}
	return n, err
}

// countedConn is a connection to the real server, its bytes counted into
// the record's network_allowed as they pass.
type countedConn struct {
	net.Conn
	p       *proxy
	a       *allowedStat
	release func() // its upstreams token
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

func (c *countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.p.count(c.a, int64(n), 0)
	}
	return n, err
}

func (c *countedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.p.count(c.a, 0, int64(n))
	}
	return n, err
}
