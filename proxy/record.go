// The record: what the jail was refused and what it reached, reported to
// the runner, and the lines the agent reads of each refusal.

package proxy

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"jail/internal/hostname"
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

// The kinds of refusal, as the record's entries name them.
const (
	kindLookup = "lookup" // a name the resolver would not answer (port 0)
	kindTCP    = "tcp"    // a connection
	kindUDP    = "udp"    // a datagram through the TUN (only TCP leaves)
)

// deny records a refusal: at most maxEntries distinct ones, the rest
// counted together, and names no longer than a DNS name.
func (p *proxy) deny(kind string, t target, reason string) {
	t.Host = recordable(t.Host, maxName)
	reason = recordable(reason, maxReason)
	p.mu.Lock()
	defer p.mu.Unlock()
	r := refusal{t, reason, kind}
	_, seen := p.denied[r]
	if !seen && len(p.denied) >= maxEntries {
		r = refusal{target{"(others)", 0}, "more distinct refusals than the record keeps", kind}
	} else if !seen {
		// Said once per refusal, as it happens: the runner keeps the
		// first few for the end of the run, when the agent reads them.
		p.out.WriteString(refusedPrefix + refusedLine(kind, t, reason, p.cfg.Profile) + "\n")
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
func refusedLine(kind string, t target, reason, profile string) string {
	host, ok := hostName(t.Host)
	if !ok {
		host = "(a name that is not a host name)"
	}
	of := ""
	if p := recordable(profile, maxName); p != "" {
		of = " of profile " + p
	}
	if kind == kindLookup {
		// Only a name is looked up: an address (or a reverse lookup's
		// name) on the list would not make it answered.
		_, ipErr := netip.ParseAddr(host)
		suggest := ok && ipErr != nil && !reverse(host)
		switch {
		case reason == reasonOff && suggest:
			return fmt.Sprintf("%s; refused lookup of %s (allow it with --allow %s)", reasonOff, host, host)
		case reason == reasonOff:
			return fmt.Sprintf("%s; refused lookup of %s", reasonOff, host)
		case reason == errNotListed.Error() && suggest:
			return fmt.Sprintf("network: refused lookup of %s (%s%s; allow it with --allow %s)", host, reason, of, host)
		}
		return fmt.Sprintf("network: refused lookup of %s (%s)", host, reason)
	}
	dest := host + ":" + strconv.Itoa(int(t.Port))
	allow := host
	if strings.Contains(host, ":") { // IPv6: in brackets, as --allow takes it
		dest, allow = "["+host+"]:"+strconv.Itoa(int(t.Port)), "["+host+"]"
	}
	if kind == kindUDP {
		return fmt.Sprintf("network: refused udp %s (%s)", dest, reason)
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
	// Kind is what was refused: "lookup" (a name the resolver did not
	// answer; Port 0), "tcp" (a connection) or "udp" (a datagram).
	Kind string `json:"kind"`
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
		denied = append(denied, HostDenial{r.Host, r.Port, n, r.Reason, r.Kind})
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
		if a.Reason != b.Reason {
			return a.Reason < b.Reason
		}
		return a.Kind < b.Kind
	})
	sort.Slice(allowed, func(i, j int) bool {
		return allowed[i].Host+strconv.Itoa(int(allowed[i].Port)) < allowed[j].Host+strconv.Itoa(int(allowed[j].Port))
	})
	d, _ := json.Marshal(denied)
	a, _ := json.Marshal(allowed)
	p.out.WriteString(fmt.Sprintf("\"network_denied\":%s,\"network_allowed\":%s\n", d, a))
}
