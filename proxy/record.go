// The record: what the jail was refused and what it reached, reported to
// the runner, and the lines the agent reads of each refusal.

package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"jail/internal/hostname"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// recordable is s as the record keeps it: printable ASCII, with what JSON
// escapes (quotes, backslashes, <, >, &) and every other byte as '?', at
// most max bytes, so a jail cannot grow a report line past what the runner
// reads (it would be dropped, hiding the jail's connections).
func recordable(s string, max int) string {
	b := []byte(s[:min(len(s), max)])
	for i, c := range b {
		if c < 0x20 || c > 0x7e || strings.IndexByte(`"\<>&`, c) >= 0 {
			b[i] = '?'
		}
	}
	return string(b)
}

// deny records a refusal: at most maxEntries distinct ones, the rest
// counted together, and names no longer than a DNS name.
func (p *proxy) deny(t target, reason string) {
	t.Host = recordable(t.Host, maxName)
	reason = recordable(reason, maxReason)
	p.mu.Lock()
	defer p.mu.Unlock()
	r := refusal{t, reason}
	_, seen := p.denied[r]
	if !seen && len(p.denied) >= maxEntries {
		r = refusal{target{"(others)", 0}, "more distinct refusals than the record keeps"}
	} else if !seen {
		// Said once per refusal, as it happens: the runner keeps the
		// first few for the end of the run, when the agent reads them.
		p.out.WriteString(refusedPrefix + refusedLine(t, reason, p.cfg.Profile) + "\n")
	}
	p.denied[r]++
	p.changed = true
}

// refusedPrefix starts a line the runner says on stderr at the end of the
// run (jail/proxyctl.c); anything else it reads is the record's or a
// failure.
const refusedPrefix = "refused "

// refusedLine is what a model reads of a refusal: the destination, why,
// and, when an --allow would lift it, the flag. The host is the jail's
// choice: shown only when it is a host name or an address (else the model
// would read the jail's words as jail's), and an internal address is never
// suggested. Host and reason are recordable, so the line is printable
// ASCII.
func refusedLine(t target, reason, profile string) string {
	host, ok := hostName(t.Host)
	if !ok {
		host = "(a name that is not a host name)"
	}
	dest := host + ":" + strconv.Itoa(int(t.Port))
	allow := host
	if strings.Contains(host, ":") { // IPv6: in brackets, as --allow takes it
		dest, allow = "["+host+"]:"+strconv.Itoa(int(t.Port)), "["+host+"]"
	}
	listed := reason == errNotListed.Error() || reason == errIPNotListed.Error()
	if ip, err := netip.ParseAddr(host); err == nil && internal(ip) {
		listed = false
	}
	if !ok || !listed {
		return fmt.Sprintf("network: refused %s (%s)", dest, reason)
	}
	if t.Port != 80 && t.Port != 443 {
		allow += ":" + strconv.Itoa(int(t.Port))
	}
	of := ""
	if p := recordable(profile, maxName); p != "" {
		of = " of profile " + p
	}
	return fmt.Sprintf("network: refused %s (%s%s; allow it with --allow %s)", dest, reason, of, allow)
}

// hostName is host as a line may show it: an IP address, or a name
// --allow would take (hostname.Check), lower case.
func hostName(host string) (string, bool) {
	h := strings.ToLower(strings.Trim(host, "[]"))
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.String(), true
	}
	h = strings.TrimSuffix(h, ".")
	return h, hostname.Check(h) == nil
}

// track counts a connection to t; at most maxEntries destinations are
// kept apart.
func (p *proxy) track(t target) *allowedStat {
	t.Host = recordable(t.Host, maxName)
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.allowed[t]
	if a == nil {
		if len(p.allowed) >= maxEntries {
			t = target{"(others)", 0}
		}
		if a = p.allowed[t]; a == nil {
			a = &allowedStat{}
			p.allowed[t] = a
		}
	}
	a.Connections++
	p.changed = true
	return a
}

// count adds a connection's bytes, from and to the server.
func (p *proxy) count(a *allowedStat, in, out int64) {
	p.mu.Lock()
	a.BytesIn += in
	a.Bytes += out
	p.changed = true
	p.mu.Unlock()
}

// relay copies both ways until either side ends, counting bytes.
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
		if tc, ok := server.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		done <- n
	}()
	down, _ = io.Copy(client, server)
	if tc, ok := client.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	client.Close()
	up += <-done
	server.Close()
	p.count(a, down, up)
}

// reportIfChanged reports when something happened since the last report.
func (p *proxy) reportIfChanged() {
	p.mu.Lock()
	changed := p.changed
	p.mu.Unlock()
	if changed {
		p.report()
	}
}

// HostDenial is a destination the proxy refused, and why: an entry of the
// status record's network_denied (jail.Status reads it as this type).
type HostDenial struct {
	Host   string `json:"host"` // as asked; bytes JSON would escape are '?'
	Port   uint16 `json:"port"`
	Count  int    `json:"count"`  // requests refused
	Reason string `json:"reason"` // "not on the allowlist", ...
}

// HostUse is a destination the proxy let through: an entry of the status
// record's network_allowed.
type HostUse struct {
	Host        string `json:"host"`
	Port        uint16 `json:"port"`
	Connections int    `json:"connections"`
	BytesIn     int64  `json:"bytes_in"`  // from the destination to the jail
	BytesOut    int64  `json:"bytes_out"` // from the jail to the destination
}

// report writes the record's network fields, as one line.
func (p *proxy) report() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.changed = false
	denied := []HostDenial{}
	for r, n := range p.denied {
		denied = append(denied, HostDenial{r.Host, r.Port, n, r.Reason})
	}
	allowed := []HostUse{}
	for t, a := range p.allowed {
		allowed = append(allowed, HostUse{t.Host, t.Port, a.Connections, a.BytesIn, a.Bytes})
	}
	sort.Slice(denied, func(i, j int) bool {
		a, b := denied[i], denied[j]
		if a.Host != b.Host || a.Port != b.Port {
			return a.Host+strconv.Itoa(int(a.Port)) < b.Host+strconv.Itoa(int(b.Port))
		}
		return a.Reason < b.Reason
	})
	sort.Slice(allowed, func(i, j int) bool {
		return allowed[i].Host+strconv.Itoa(int(allowed[i].Port)) < allowed[j].Host+strconv.Itoa(int(allowed[j].Port))
	})
	d, _ := json.Marshal(denied)
	a, _ := json.Marshal(allowed)
	p.out.WriteString(fmt.Sprintf("\"network_denied\":%s,\"network_allowed\":%s\n", d, a))
}
