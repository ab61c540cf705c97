// What the tests share: a proxy whose report they read, a host resolver
// they run, connected sockets on the host's loopback.

package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// reportReader reads the proxy's report pipe, as the runner does.
type reportReader struct {
	w     *os.File
	mu    sync.Mutex
	lines []string
	seen  chan struct{} // a sync line arrived
}

// newTestProxy is a proxy with cfg whose report the test reads.
func newTestProxy(t *testing.T, cfg Config) (*proxy, *reportReader) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	rr := &reportReader{w: w, seen: make(chan struct{}, 1)}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if sc.Text() == "#sync" {
				rr.seen <- struct{}{}
				continue
			}
			rr.mu.Lock()
			rr.lines = append(rr.lines, sc.Text())
			rr.mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Close(); r.Close() })
	return newProxy(cfg, w), rr
}

// sync waits until the reader has every line written so far.
func (rr *reportReader) sync(t *testing.T) {
	t.Helper()
	rr.w.WriteString("#sync\n")
	select {
	case <-rr.seen:
	case <-time.After(10 * time.Second):
		t.Fatal("the report reader is stuck")
	}
}

// refused is the refusal lines so far, without the prefix.
func (rr *reportReader) refused(t *testing.T) []string {
	t.Helper()
	rr.sync(t)
	rr.mu.Lock()
	defer rr.mu.Unlock()
	var out []string
	for _, l := range rr.lines {
		if s, ok := strings.CutPrefix(l, refusedPrefix); ok {
			out = append(out, s)
		}
	}
	return out
}

// record is the proxy's report, as the status record gets it.
func record(t *testing.T, p *proxy, rr *reportReader) ([]HostDenial, []HostUse) {
	t.Helper()
	p.report()
	rr.sync(t)
	rr.mu.Lock()
	last := rr.lines[len(rr.lines)-1]
	rr.mu.Unlock()
	var rec struct {
		Denied  []HostDenial `json:"network_denied"`
		Allowed []HostUse    `json:"network_allowed"`
	}
	if err := json.Unmarshal([]byte("{"+last+"}"), &rec); err != nil {
		t.Fatalf("report line %.200q: %v", last, err)
	}
	return rec.Denied, rec.Allowed
}

// hostResolver runs a DNS server on the host's loopback standing for the
// host's resolver, and returns a resolver that asks it. Names starting
// "gone." do not exist, "broken." get SERVFAIL, "loop." resolve to
// 127.0.0.1, "private." to 10.1.2.3, the rest to 93.184.216.34 (and no
// IPv6).
func hostResolver(t *testing.T) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var par dnsmessage.Parser
			h, err := par.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := par.Question()
			if err != nil {
				continue
			}
			name := q.Name.String()
			rcode := dnsmessage.RCodeSuccess
			var a []byte
			switch {
			case strings.HasPrefix(name, "gone."):
				rcode = dnsmessage.RCodeNameError
			case strings.HasPrefix(name, "broken."):
				rcode = dnsmessage.RCodeServerFailure
			case strings.HasPrefix(name, "loop.") && q.Type == dnsmessage.TypeA:
				a = []byte{127, 0, 0, 1}
			case strings.HasPrefix(name, "private.") && q.Type == dnsmessage.TypeA:
				a = []byte{10, 1, 2, 3}
			case q.Type == dnsmessage.TypeA:
				a = []byte{93, 184, 216, 34}
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, RecursionDesired: h.RecursionDesired,
				RecursionAvailable: true, Authoritative: true, RCode: rcode})
			b.StartQuestions()
			b.Question(q)
			if a != nil {
				b.StartAnswers()
				b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: q.Class, TTL: 60}, dnsmessage.AResource{A: [4]byte(a)})
			}
			out, _ := b.Finish()
			pc.WriteTo(out, from)
		}
	}()
	return resolverAt(pc.LocalAddr().String())
}

// deadResolver is a host resolver whose server is gone: each query meets
// a closed port.
func deadResolver(t *testing.T) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	return resolverAt(addr)
}

func resolverAt(addr string) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

// serveResolver serves p's resolver on the host's loopback, UDP and TCP,
// and returns their addresses.
func serveResolver(t *testing.T, p *proxy) (udp, tcp string) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close(); ln.Close() })
	go p.serveDNSUDP(pc)
	go p.serveDNSTCP(ln)
	return pc.LocalAddr().String(), ln.Addr().String()
}

// query builds a query for name (as given: no dot added) of type typ.
func query(t *testing.T, id uint16, name string, typ dnsmessage.Type) []byte {
	t.Helper()
	msg, err := queryErr(id, name, typ)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func queryErr(id uint16, name string, typ dnsmessage.Type) ([]byte, error) {
	n, err := dnsmessage.NewName(name)
	if err != nil {
		return nil, err
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: id, RecursionDesired: true})
	b.StartQuestions()
	if err := b.Question(dnsmessage.Question{Name: n, Type: typ, Class: dnsmessage.ClassINET}); err != nil {
		return nil, err
	}
	return b.Finish()
}

// exchange sends msg to the resolver at addr over network ("udp" or
// "tcp") and returns the answer.
func exchange(t *testing.T, network, addr string, msg []byte) []byte {
	t.Helper()
	out, err := exchangeErr(network, addr, msg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func exchangeErr(network, addr string, msg []byte) ([]byte, error) {
	c, err := net.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(15 * time.Second))
	if network == "tcp" {
		msg = append([]byte{byte(len(msg) >> 8), byte(len(msg))}, msg...)
	}
	if _, err := c.Write(msg); err != nil {
		return nil, err
	}
	buf := make([]byte, 65536)
	if network == "tcp" {
		if _, err := io.ReadFull(c, buf[:2]); err != nil {
			return nil, fmt.Errorf("tcp answer: %w", err)
		}
		n := int(buf[0])<<8 | int(buf[1])
		if _, err := io.ReadFull(c, buf[:n]); err != nil {
			return nil, fmt.Errorf("tcp answer: %w", err)
		}
		return buf[:n], nil
	}
	n, err := c.Read(buf)
	if err != nil {
		return nil, fmt.Errorf("udp answer: %w", err)
	}
	return buf[:n], nil
}

// answer is a parsed reply: its header, and the addresses it gives.
type answer struct {
	h     dnsmessage.Header
	addrs []netip.Addr
	ttl   uint32
}

func parseAnswer(t *testing.T, msg []byte) answer {
	t.Helper()
	a, err := parseErr(msg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func parseErr(msg []byte) (answer, error) {
	var par dnsmessage.Parser
	h, err := par.Start(msg)
	if err != nil {
		return answer{}, fmt.Errorf("answer: %w", err)
	}
	a := answer{h: h}
	if err := par.SkipAllQuestions(); err != nil {
		return a, fmt.Errorf("answer: %w", err)
	}
	rrs, err := par.AllAnswers()
	if err != nil {
		return a, fmt.Errorf("answer: %w", err)
	}
	for _, rr := range rrs {
		a.ttl = rr.Header.TTL
		switch b := rr.Body.(type) {
		case *dnsmessage.AResource:
			a.addrs = append(a.addrs, netip.AddrFrom4(b.A))
		case *dnsmessage.AAAAResource:
			a.addrs = append(a.addrs, netip.AddrFrom16(b.AAAA))
		}
	}
	return a, nil
}

// ask asks the resolver at addr for name's typ records.
func ask(t *testing.T, network, addr, name string, typ dnsmessage.Type) answer {
	t.Helper()
	a, err := askErr(network, addr, name, typ)
	if err != nil {
		t.Fatalf("%s %s: %v", network, name, err)
	}
	return a
}

func askErr(network, addr, name string, typ dnsmessage.Type) (answer, error) {
	q, err := queryErr(0x1234, name, typ)
	if err != nil {
		return answer{}, err
	}
	out, err := exchangeErr(network, addr, q)
	if err != nil {
		return answer{}, err
	}
	return parseErr(out)
}

// pair is a connected pair of TCP sockets on the host's loopback: the
// jail's end and the end the helper serves.
func pair(t *testing.T) (jail, served net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	jail, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	served, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jail.Close(); served.Close() })
	return jail, served
}

// server runs a TCP server on the host's loopback, each connection
// handled by serve, and returns its port.
func server(t *testing.T, serve func(net.Conn)) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return uint16(ln.Addr().(*net.TCPAddr).Port)
}
