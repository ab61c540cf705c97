// The jail's resolver: 127.0.0.1:53 inside the jail, UDP and TCP, served
// from the sockets PID 1 made. Allowed names get their fake address; every
// other lookup is refused (NXDOMAIN), recorded and said.

package proxy

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// Bounds on what the jail's queries can make the resolver hold.
const (
	maxQuery   = 1232 // bytes of a query (EDNS's safe UDP size)
	maxDNSName = 253
	maxDNSConn = 16               // TCP connections at once
	maxDNSUDP  = 64               // UDP queries answered at once
	dnsIdle    = 10 * time.Second // a TCP connection's read or write
	answerTTL  = 5                // seconds: the fake addresses stay, the vetted ones are renewed
)

// reasonOff is the record's reason for a lookup in mode "none".
const reasonOff = "network is off in this jail"

// serveDNSUDP answers queries on pc until it is closed.
func (p *proxy) serveDNSUDP(pc net.PacketConn) {
	busy := make(chan struct{}, maxDNSUDP)
	for {
		// One byte more than a query may be: a longer datagram arrives
		// cut to it, and is answered FORMERR.
		buf := make([]byte, maxQuery+1)
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		// A full set of slow host lookups holds the reading back: the
		// kernel's buffer then drops queries, and programs retry.
		busy <- struct{}{}
		go func() {
			defer func() { <-busy }()
			if out := p.answer(buf[:n]); out != nil {
				pc.WriteTo(out, from)
			}
		}()
	}
}

// serveDNSTCP answers DNS over TCP (RFC 7766: each message after its
// 2-byte length) on ln until it is closed; connections past maxDNSConn
// are closed at once.
func (p *proxy) serveDNSTCP(ln net.Listener) {
	acceptLimited(ln, make(chan struct{}, maxDNSConn), p.serveDNSConn, nil)
}

// serveDNSConn answers one TCP client's queries, in turn.
func (p *proxy) serveDNSConn(c net.Conn) {
	var head [2]byte
	buf := make([]byte, maxQuery)
	for {
		c.SetReadDeadline(time.Now().Add(dnsIdle))
		if _, err := io.ReadFull(c, head[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint16(head[:]))
		tooLong := n > maxQuery
		// Of a longer query, only its header is read, for the answer's
		// ID; the connection ends after it.
		q := buf[:12]
		if !tooLong {
			q = buf[:n]
		}
		if _, err := io.ReadFull(c, q); err != nil {
			return
		}
		var out []byte
		if tooLong {
			out = formErr(q)
		} else {
			out = p.answer(q)
		}
		if out == nil {
			return
		}
		c.SetWriteDeadline(time.Now().Add(dnsIdle))
		if _, err := c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(out))), out...)); err != nil || tooLong {
			return
		}
	}
}

// formErr is the FORMERR answer to a query of which only the header is
// read; nil when there is not even that.
func formErr(q []byte) []byte {
	var par dnsmessage.Parser
	h, err := par.Start(q)
	if err != nil || h.Response {
		return nil
	}
	return reply(h, nil, dnsmessage.RCodeFormatError, nil)
}

// answer is the reply to one query, nil for none (not a query at all).
func (p *proxy) answer(msg []byte) []byte {
	var par dnsmessage.Parser
	h, err := par.Start(msg)
	if err != nil || h.Response {
		return nil
	}
	if len(msg) > maxQuery {
		return reply(h, nil, dnsmessage.RCodeFormatError, nil)
	}
	if h.OpCode != 0 {
		return reply(h, nil, dnsmessage.RCodeNotImplemented, nil)
	}
	qs, err := par.AllQuestions()
	if err != nil || len(qs) != 1 {
		return reply(h, nil, dnsmessage.RCodeFormatError, nil)
	}
	q := qs[0]
	name := normal(q.Name.String())
	if len(name) > maxDNSName {
		return reply(h, &q, dnsmessage.RCodeFormatError, nil)
	}
	if q.Class != dnsmessage.ClassINET {
		return reply(h, &q, dnsmessage.RCodeRefused, nil)
	}
	rcode, rr := p.resolve(name, q)
	return reply(h, &q, rcode, rr)
}

// resolve decides on a question about name: its code and answer, if any.
func (p *proxy) resolve(name string, q dnsmessage.Question) (dnsmessage.RCode, *dnsmessage.Resource) {
	lookup := target{name, 0}
	if p.cfg.Mode != "allowlist" {
		p.deny(kindLookup, lookup, reasonOff)
		return dnsmessage.RCodeNameError, nil
	}
	if !p.listedAnyPort(name, false) {
		p.deny(kindLookup, lookup, errNotListed.Error())
		return dnsmessage.RCodeNameError, nil
	}
	if q.Type != dnsmessage.TypeA && q.Type != dnsmessage.TypeAAAA {
		return dnsmessage.RCodeSuccess, nil // NODATA: only addresses are answered
	}
	addr, err := p.fakeAddr(name)
	if err != nil {
		p.deny(kindLookup, lookup, err.Error())
		if errors.Is(err, errResolver) || errors.Is(err, errPoolFull) {
			return dnsmessage.RCodeServerFailure, nil
		}
		return dnsmessage.RCodeNameError, nil
	}
	rr := &dnsmessage.Resource{Header: dnsmessage.ResourceHeader{Name: q.Name, Type: q.Type, Class: q.Class, TTL: answerTTL}}
	if q.Type == dnsmessage.TypeA {
		rr.Body = &dnsmessage.AResource{A: addr.As4()}
	} else {
		rr.Body = &dnsmessage.AAAAResource{AAAA: twin(addr).As16()}
	}
	return dnsmessage.RCodeSuccess, rr
}

// fakeAddr is name's fake address, its real ones vetted afresh when the last
// vetting is older than the answers' TTL.
func (p *proxy) fakeAddr(name string) (netip.Addr, error) {
	if a, ok := p.names.recent(name); ok {
		return a, nil
	}
	addrs, pinned, err := p.vet(name)
	if err != nil {
		return netip.Addr{}, err
	}
	return p.names.put(name, addrs, pinned)
}

// reply builds an answer to the query with header h: the question echoed
// as asked (case and all: some clients check), and rr when there is one.
func reply(h dnsmessage.Header, q *dnsmessage.Question, rcode dnsmessage.RCode, rr *dnsmessage.Resource) []byte {
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, OpCode: h.OpCode,
		RecursionDesired: h.RecursionDesired, RecursionAvailable: true, RCode: rcode})
	b.EnableCompression()
	if q != nil {
		b.StartQuestions()
		if err := b.Question(*q); err != nil {
			return nil
		}
	}
	if rr != nil {
		b.StartAnswers()
		var err error
		switch body := rr.Body.(type) {
		case *dnsmessage.AResource:
			err = b.AResource(rr.Header, *body)
		case *dnsmessage.AAAAResource:
			err = b.AAAAResource(rr.Header, *body)
		}
		if err != nil {
			return nil
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}

// reverse reports whether name is a reverse lookup's (PTR, under .arpa):
// an --allow would not make it answered, so a refusal suggests none.
func reverse(name string) bool {
	return strings.HasSuffix(name, ".arpa") || name == "arpa"
}
