// Interception: the jail's TLS connections to a host a credential is
// bound to are terminated with a certificate of the run's authority (its
// HTTP is served in inject.go), and a program that refuses that
// certificate is said for what it is.

package proxy

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"syscall"
	"time"
)

// Bounds on an intercepted connection.
const (
	// helloWait is how long, to a port other than 443, the jail's first
	// bytes to a bound host are waited for: a TLS client sends its
	// ClientHello at once, and a protocol whose server speaks first
	// (SSH, SMTP) is relayed raw after it.
	helloWait = 2 * time.Second
	// handshakeTimeout bounds the jail's ClientHello and handshake.
	handshakeTimeout = 30 * time.Second
	// maxStreams bounds the requests at once (HTTP/2 streams), and so the
	// connections to the real server a connection may open.
	maxStreams = 32
	// preDialedFresh is how long the connection the policy dialed for
	// the jail's is used for its first request: older, the server may
	// have dropped it, unused, and a new one is dialed.
	preDialedFresh = 5 * time.Second
	// tokenWait bounds how long a connection to a real server waits for
	// a place among maxUpstreams.
	tokenWait = 5 * time.Second
)

// intercept serves a connection to a host a credential is bound to
// (serveConn's hook). To port 443 the ClientHello's SNI must be the name,
// as checkTLS requires of every connection; to another port, what is not
// a ClientHello for the name is relayed raw, as to any host.
func (p *proxy) intercept(t target, client, server net.Conn, br *bufio.Reader) {
	dialed := time.Now()
	var first []byte
	if t.Port == 443 {
		var ok bool
		if first, ok = p.checkTLS(client, br, t); !ok {
			client.Close()
			server.Close()
			return
		}
	} else {
		var hello, ok bool
		first, hello, ok = helloFor(t, client, br)
		if !ok {
			client.Close()
			server.Close()
			return
		}
		if !hello {
			p.relay(t, client, server, first)
			return
		}
	}
	conf, err := p.creds.serverConfig(t.Host)
	if err != nil {
		p.deny(kindTCP, t, "no interception certificate")
		client.Close()
		server.Close()
		return
	}
	// offered: the certificate went out. A handshake that fails after
	// that, other than by time, failed at the program's end: OpenSSL's
	// clients (curl, python) may send their alert in a way crypto/tls
	// reads as "bad record MAC" rather than as the alert.
	offered := false
	conf = conf.Clone()
	cert := conf.Certificates[0]
	conf.Certificates = nil
	conf.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		offered = true
		return &cert, nil
	}
	tc := tls.Server(&replayed{Conn: client, r: io.MultiReader(bytes.NewReader(first), client)}, conf)
	client.SetDeadline(time.Now().Add(handshakeTimeout))
	p.handshakes.Add(1)
	err = tc.Handshake()
	client.SetDeadline(time.Time{})
	if err != nil {
		p.handshakeFailed(t, err, offered)
		p.handshakes.Done()
		client.Close()
		server.Close()
		return
	}
	p.handshakes.Done()
	defer p.relays.start(nil)()
	p.newSession(t, server, dialed).serve(tc)
}

// helloFor reads, to a port other than 443, the jail's ClientHello if it
// sends one at once; it returns what it read and what the client sent
// after, and whether that is a ClientHello for t's name. !ok: the client
// broke off within its hello.
func helloFor(t target, client net.Conn, br *bufio.Reader) (first []byte, hello, ok bool) {
	client.SetReadDeadline(time.Now().Add(helloWait))
	if b, err := br.Peek(1); err == nil && b[0] == 0x16 {
		client.SetReadDeadline(time.Now().Add(handshakeTimeout))
		var sni string
		first, sni, err = readClientHello(br)
		if first == nil {
			return nil, false, false
		}
		hello = err == nil && normal(sni) == t.Host
	}
	client.SetReadDeadline(time.Time{})
	if k := br.Buffered(); k > 0 {
		rest, _ := br.Peek(k)
		first = append(first, rest...)
	}
	return first, hello, true
}

// replayed is the jail's connection, read from r: what was read of it
// already, then the rest.
type replayed struct {
	net.Conn
	r io.Reader
}

func (c *replayed) Read(b []byte) (int, error) { return c.r.Read(b) }

// handshakeFailed records a handshake the jail's program did not
// complete. One that refused the certificate (an alert about it, or the
// connection dropped) is said in words of its own: the program pins
// certificates or does not trust the run's authority, and no --allow
// changes that.
func (p *proxy) handshakeFailed(t target, err error, offered bool) {
	var ne net.Error
	timedOut := errors.As(err, &ne) && ne.Timeout()
	if refusedCert(err) || offered && !timedOut {
		var envs []string
		for _, c := range p.creds.boundTo(t.Host) {
			envs = append(envs, c.Env)
		}
		p.denySaying(kindTCP, t, reasonRefusedCert, refusedCertLine(t, envs))
		return
	}
	why := "failed"
	var op *net.OpError
	switch {
	case timedOut:
		why = "timed out"
	case errors.As(err, &op) && op.Op == "remote error":
		why = "ended by the program: " + op.Err.Error() // a TLS alert's name
	}
	p.deny(kindTCP, t, "TLS handshake of the interception "+why)
}

// refusedCert reports whether a handshake failed as a client's that does
// not accept the server's certificate: it sent an alert about the
// certificate, or dropped the connection.
func refusedCert(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Err == nil {
		return false
	}
	if op.Op == "read" && op.Err.Error() == syscall.ECONNRESET.Error() {
		return true // the stack's connections say a reset in words only
	}
	if op.Op != "remote error" {
		return false
	}
	// bad_certificate, unsupported_certificate, certificate_revoked,
	// certificate_expired, certificate_unknown, unknown_ca (RFC 8446
	// §6.2); the alert crypto/tls returns has no exported type.
	for _, a := range []tls.AlertError{42, 43, 44, 45, 46, 48} {
		if op.Err.Error() == a.Error() {
			return true
		}
	}
	return false
}
