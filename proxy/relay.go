// Relaying an accepted connection to its destination, counted: raw, or
// plain HTTP with each request's Host checked against the destination.

package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// closeWriter is a connection that can end one direction (TCP, and the
// stack's connections).
type closeWriter interface{ CloseWrite() error }

func closeWrite(c net.Conn) {
	if cw, ok := c.(closeWriter); ok {
		cw.CloseWrite()
	}
}

// relay copies both ways until either side ends, counting bytes; first
// is what the client sent that was already read.
func (p *proxy) relay(t target, client net.Conn, server net.Conn, first []byte) {
	a := p.track(t)
	var up, down int64
	if len(first) > 0 {
		n, _ := server.Write(first)
		up += int64(n)
	}
	done := make(chan int64, 1)
	go func() {
		n, _ := io.Copy(server, client)
		closeWrite(server)
		done <- n
	}()
	down, _ = io.Copy(client, server)
	closeWrite(client)
	client.Close()
	up += <-done
	server.Close()
	p.count(a, down, up)
}

// relayHTTP relays plain HTTP to t, request by request, each only if its
// Host is t's name: one server often answers for many names (virtual
// hosting), and the list allows one. Each request is written anew from
// what was parsed, so the server reads the Host that was checked. After
// an Upgrade (WebSocket) or CONNECT request the rest goes through raw.
// A request for another host cuts the connection, and is recorded.
func (p *proxy) relayHTTP(t target, client, server net.Conn) {
	var a *allowedStat // counted from its first request let through
	done := make(chan int64, 1)
	go func() {
		n, _ := io.Copy(client, server)
		closeWrite(client)
		done <- n
	}()
	up := &countWriter{w: server}
	lim := &io.LimitedReader{R: client, N: maxHeader}
	br := bufio.NewReader(lim)
	for {
		// The request line and headers are bounded; a body is read as
		// it comes.
		lim.N = maxHeader
		req, err := http.ReadRequest(br)
		if err != nil {
			if err != io.EOF {
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
		host := req.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if normal(strings.Trim(host, "[]")) != t.Host {
			p.deny(kindTCP, t, fmt.Sprintf("HTTP Host '%s' is not the host asked for", recordable(req.Host, maxName)))
			server.Close()
			break
		}
		if a == nil {
			a = p.track(t)
		}
		if _, ok := req.Header["User-Agent"]; !ok {
			// Written as the client sent it: without one (Write would
			// add Go's).
			req.Header["User-Agent"] = []string{""}
		}
		if err := req.Write(up); err != nil {
			break
		}
		if req.Method == http.MethodConnect || req.Header.Get("Upgrade") != "" {
			io.Copy(up, br)
			break
		}
	}
	closeWrite(server)
	down := <-done
	client.Close()
	server.Close()
	if a != nil {
		p.count(a, down, up.n)
	}
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
