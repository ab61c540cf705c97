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

	"github.com/jail-sandbox/jail/internal/hostname"
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
	p.denySaying(kind, t, reason, "")
}

// denySaying records a refusal as deny does, and when it is new says line
// (printable ASCII) for it, or refusedLine's words when line is empty.
func (p *proxy) denySaying(kind string, t target, reason, line string) {
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
		if line == "" {
			line = refusedLine(kind, t, reason, p.cfg.Profile)
		}
		p.out.WriteString(refusedPrefix + line + "\n")
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
	line := fmt.Sprintf("\"network_denied\":%s,\"network_allowed\":%s", d, a)
	if p.creds != nil {
		use, misuse := p.creds.rec.lists()
		u, _ := json.Marshal(use)
		m, _ := json.Marshal(misuse)
		line += fmt.Sprintf(",\"credential_use\":%s,\"credential_misuse\":%s", u, m)
	}
	p.out.WriteString(line + "\n")
}

// CredentialUse is a binding's use, for one of its hosts: an entry of the
// status record's credential_use. Only requests in which jail put the
// real value count, and their bodies' bytes.
type CredentialUse struct {
	Env       string `json:"env"`
	Host      string `json:"host"`
	Requests  int    `json:"requests"`
	BytesUp   int64  `json:"bytes_up"`   // request bodies, to the host
	BytesDown int64  `json:"bytes_down"` // response bodies, from the host
}

// CredentialMisuse counts the requests that carried a variable's
// placeholder to a host it is not bound to (forwarded as they were): an
// entry of the status record's credential_misuse.
type CredentialMisuse struct {
	Env      string `json:"env"`
	Host     string `json:"host"`
	Requests int    `json:"requests"`
}

// credKey is an entry of credential_use or credential_misuse.
type credKey struct{ Env, Host string }

// credRecord is what the record keeps of the bindings, under the proxy's
// mu: each binding's use, and each placeholder seen going where it is not
// bound.
type credRecord struct {
	use    map[credKey]*CredentialUse
	misuse map[credKey]int
}

// maxCredEntries bounds each of the two lists (the misuse's hosts are the
// jail's choice), and maxEnv a variable's name in them.
const (
	maxCredEntries = 64
	maxEnv         = 128
)

// newCredRecord lists every binding's hosts, unused: the record says a
// binding that never served.
func newCredRecord(all []*Credential) credRecord {
	r := credRecord{use: map[credKey]*CredentialUse{}, misuse: map[credKey]int{}}
	for _, c := range all {
		for _, h := range c.Hosts {
			r.useOf(c.Env, h)
		}
	}
	return r
}

// useOf is the entry of env's use at host, made if new.
func (r *credRecord) useOf(env, host string) *CredentialUse {
	k := credKey{recordable(env, maxEnv), recordable(host, maxName)}
	u := r.use[k]
	if u == nil {
		if len(r.use) >= maxCredEntries {
			k = credKey{"(others)", "(others)"}
		}
		if u = r.use[k]; u == nil {
			u = &CredentialUse{Env: k.Env, Host: k.Host}
			r.use[k] = u
		}
	}
	return u
}

// credUsed counts a request to host in which the values of used were put,
// and returns their entries, for countCred to add its bodies to.
func (p *proxy) credUsed(used []*Credential, host string) []*CredentialUse {
	p.mu.Lock()
	defer p.mu.Unlock()
	var us []*CredentialUse
	for _, c := range used {
		u := p.creds.rec.useOf(c.Env, host)
		u.Requests++
		us = append(us, u)
	}
	p.changed = true
	return us
}

// countCred adds body bytes, to and from the host, to entries of
// credUsed's.
func (p *proxy) countCred(us []*CredentialUse, up, down int64) {
	p.mu.Lock()
	for _, u := range us {
		u.BytesUp += up
		u.BytesDown += down
	}
	p.changed = true
	p.mu.Unlock()
}

// credMisused counts a request that carried c's placeholder to host.
func (p *proxy) credMisused(c *Credential, host string) {
	k := credKey{recordable(c.Env, maxEnv), recordable(host, maxName)}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := &p.creds.rec
	if _, seen := r.misuse[k]; !seen && len(r.misuse) >= maxCredEntries {
		k = credKey{"(others)", "(others)"}
	}
	r.misuse[k]++
	p.changed = true
}

// lists is the record's two lists, sorted.
func (r *credRecord) lists() ([]CredentialUse, []CredentialMisuse) {
	use := []CredentialUse{}
	for _, u := range r.use {
		use = append(use, *u)
	}
	misuse := []CredentialMisuse{}
	for k, n := range r.misuse {
		misuse = append(misuse, CredentialMisuse{k.Env, k.Host, n})
	}
	sort.Slice(use, func(i, j int) bool {
		return use[i].Env < use[j].Env || use[i].Env == use[j].Env && use[i].Host < use[j].Host
	})
	sort.Slice(misuse, func(i, j int) bool {
		return misuse[i].Env < misuse[j].Env || misuse[i].Env == misuse[j].Env && misuse[i].Host < misuse[j].Host
	})
	return use, misuse
}

// reasonRefusedCert is the record's reason for a connection whose program
// refused the certificate jail made for an intercepted host.
const reasonRefusedCert = "the program refused the interception certificate"

// refusedCertLine is what the agent reads of it: the host was intercepted
// for the variables envs, and a program that pins certificates, or does
// not read SSL_CERT_FILE, cannot use them. Nothing to allow: no --allow
// hint (the runner shows lines with one first).
func refusedCertLine(t target, envs []string) string {
	host, ok := hostName(t.Host)
	if !ok {
		host = "(a name that is not a host name)"
	}
	return fmt.Sprintf("network: %s:%d was intercepted to inject %s, and the program refused jail's certificate for it "+
		"(it pins certificates or does not trust SSL_CERT_FILE); that program cannot use a bound credential",
		host, t.Port, recordable(strings.Join(envs, ", "), 300))
}
