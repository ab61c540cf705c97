// Package proxy is the allowlist network mode's proxy: an HTTP proxy (plain
// requests and CONNECT) and a SOCKS5 proxy, listening on 127.0.0.1 inside
// the jail's network namespace (PID 1 makes the sockets, the runner hands
// them over) and dialling out from the host's. It lets through only the
// names on the allowlist, resolves them itself (the jail has no DNS),
// refuses IP literals the list does not name and names that resolve to
// loopback, link-local or private addresses unless pinned or named, and
// checks a CONNECT to port 443 sends the SNI of the host it named. The
// jail has no other route out, so the list is enforced, not advisory.
package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"jail/internal/hostname"
)

// Config is what the runner passes, as JSON in argv[1].
type Config struct {
	Allow []Allow           `json:"allow"`
	Hosts map[string]string `json:"hosts"` // pinned names
	// UID and GID: when started as root, the proxy becomes them (the
	// jail's own host ids) before it reads a byte from the jail.
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
	// Profile names the run's profile, for the line that tells the
	// agent how to allow a refused host.
	Profile string `json:"profile"`
}

// Allow is one allowlist entry (jail.AllowEntry).
type Allow struct {
	Host     string `json:"host"`
	Wildcard bool   `json:"wildcard"`
	IP       bool   `json:"ip"`
	Port     uint16 `json:"port"`
}

// Fds the runner passes.
const (
	fdHTTP   = 3
	fdSOCKS  = 4
	fdReport = 5
	fdConfig = 6 // the Config, as JSON, then EOF
	// fdLifeline is a pipe whose write end only the runner holds: EOF on
	// it is the runner's end, however it ended, even before the proxy
	// started (a parent-death signal set after its parent died never
	// comes).
	fdLifeline = 7
)

// Bounds on what a jail can make the proxy hold: it runs outside the
// jail's namespaces, in its cgroup.
const (
	maxHeader  = 64 << 10 // a request line and headers
	maxEntries = 256      // distinct refusals and destinations recorded
	memLimit   = 256 << 20
	// A recorded name and reason, in bytes: with maxEntries of each
	// kind a report line stays under the 256 KiB the runner reads.
	maxName   = 253
	maxReason = 200
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

// Main serves the two listeners until the runner ends it (SIGTERM) or
// dies, and reports at most once a second and at the end. It never
// returns.
func Main(args []string) {
	debug.SetMemoryLimit(memLimit)
	// Non-blocking, so the netpoller waits on it rather than a thread of
	// its own: the proxy's threads count against the jail's pids limit.
	unix.SetNonblock(fdLifeline, true)
	lifeline := os.NewFile(fdLifeline, "lifeline")
	// Why it could not serve goes to the runner on the report pipe (a
	// line that is not a report), which says it: stderr is /dev/null, so
	// nothing but this code's whole lines ever reaches that pipe.
	report := os.NewFile(fdReport, "report")
	var cfg Config
	data, err := io.ReadAll(io.LimitReader(os.NewFile(fdConfig, "config"), 1<<20))
	if err == nil {
		err = json.Unmarshal(data, &cfg)
	}
	if err != nil {
		fail(report, fmt.Errorf("configuration: %w", err))
	}
	if os.Geteuid() == 0 {
		if err := dropRoot(cfg.UID, cfg.GID); err != nil {
			fail(report, err)
		}
	}
	// Dies with the runner: the uid change cleared the parent-death
	// signal, so it is set again; the lifeline, watched from now on,
	// covers a runner that died before.
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0)
	go func() {
		var b [1]byte
		lifeline.Read(b[:]) // EOF, or an error: the runner is gone
		os.Exit(125)
	}()
	p := newProxy(cfg, report)
	go func() {
		for range time.Tick(time.Second) {
			p.reportIfChanged()
		}
	}()
	for _, l := range []struct {
		fd    uintptr
		serve func(net.Conn)
	}{{fdHTTP, p.serveHTTP}, {fdSOCKS, p.serveSOCKS}} {
		ln, err := net.FileListener(os.NewFile(l.fd, "listener"))
		if err != nil {
			p.mu.Lock() // no report is written meanwhile
			fail(report, fmt.Errorf("listener: %w", err))
		}
		go p.accept(ln, l.serve)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	<-term
	p.report()
	os.Exit(0)
}

// fail tells the runner why the proxy ends, on one line, and ends it.
func fail(report *os.File, err error) {
	fmt.Fprintln(report, "jail: allowlist proxy:", strings.ReplaceAll(err.Error(), "\n", " "))
	os.Exit(125)
}

func dropRoot(uid, gid uint32) error {
	if uid == 0 || gid == 0 {
		return errors.New("refusing to run as root: no unprivileged ids given")
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("drop groups: %w", err)
	}
	if err := syscall.Setgid(int(gid)); err != nil {
		return fmt.Errorf("setgid %d: %w", gid, err)
	}
	if err := syscall.Setuid(int(uid)); err != nil {
		return fmt.Errorf("setuid %d: %w", uid, err)
	}
	return nil
}

// proxy holds the policy and what happened.
type proxy struct {
	cfg    Config
	dialer net.Dialer
	out    *os.File

	mu      sync.Mutex
	denied  map[refusal]int
	allowed map[target]*allowedStat
	changed bool
}

type target struct {
	Host string
	Port uint16
}

type refusal struct {
	target
	Reason string
}

type allowedStat struct {
	Connections    int
	BytesIn, Bytes int64 // from the server, to the server
}

func newProxy(cfg Config, out *os.File) *proxy {
	return &proxy{cfg: cfg, out: out, dialer: net.Dialer{Timeout: 30 * time.Second},
		denied: map[refusal]int{}, allowed: map[target]*allowedStat{}}
}

func (p *proxy) accept(ln net.Listener, serve func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go func() {
			defer c.Close()
			serve(c)
		}()
	}
}

// errDenied is a refusal, with the reason the record gives.
type errDenied struct{ reason string }

func (e *errDenied) Error() string { return e.reason }

// dial checks host:port against the policy, resolves it, and connects to
// an address the policy allows. A refusal is recorded.
func (p *proxy) dial(host string, port uint16) (net.Conn, error) {
	host = normal(host)
	t := target{host, port}
	addrs, err := p.permit(host, port)
	if err != nil {
		p.deny(t, err.Error())
		return nil, &errDenied{err.Error()}
	}
	var last error
	for _, a := range addrs {
		c, err := p.dialer.Dial("tcp", net.JoinHostPort(a.String(), strconv.Itoa(int(port))))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// The refusals an --allow would lift: refusedLine names the flag for them.
var (
	errNotListed   = errors.New("not on the allowlist")
	errIPNotListed = errors.New("IP address not on the allowlist")
)

// permit says which addresses host:port may be reached at.
func (p *proxy) permit(host string, port uint16) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		ip = ip.Unmap()
		if !p.listed(ip.String(), true, port) {
			return nil, errIPNotListed
		}
		return []netip.Addr{ip}, nil
	}
	if !p.listed(host, false, port) {
		return nil, errNotListed
	}
	if pinned, ok := p.cfg.Hosts[host]; ok {
		ip, err := netip.ParseAddr(pinned)
		if err != nil {
			return nil, errors.New("bad pin")
		}
		return []netip.Addr{ip.Unmap()}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Fully qualified: no search domain of the host's is tried after it.
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host+".")
	if err != nil {
		return nil, errors.New("does not resolve")
	}
	var ok []netip.Addr
	for _, ip := range ips {
		ip = ip.Unmap()
		if internal(ip) && !p.listed(ip.String(), true, port) {
			continue
		}
		ok = append(ok, ip)
	}
	if len(ok) == 0 {
		return nil, errors.New("resolves only to loopback, link-local or private addresses")
	}
	return ok, nil
}

// listed reports whether an allow entry names host (an IP when ip) and
// port; an entry without a port allows 80 and 443.
func (p *proxy) listed(host string, ip bool, port uint16) bool {
	for _, a := range p.cfg.Allow {
		if a.IP != ip {
			continue
		}
		if a.Port == 0 && port != 80 && port != 443 || a.Port != 0 && a.Port != port {
			continue
		}
		if !a.Wildcard && a.Host == host || a.Wildcard && strings.HasSuffix(host, "."+a.Host) {
			return true
		}
	}
	return false
}

// normal is a host name as the policy and the record see it.
func normal(host string) string {
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// special are the ranges that are not the public internet, beyond what
// netip's predicates know; an address in them is internal.
var special = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001::/23"),
}

// internal addresses are refused unless named: anything but public
// unicast (loopback, the cloud metadata service 169.254.169.254, private
// and special ranges), also when embedded in IPv6 (NAT64, 6to4,
// IPv4-compatible).
func internal(ip netip.Addr) bool {
	if ip.Is6() {
		b := ip.As16()
		var v4 [4]byte
		switch {
		case netip.MustParsePrefix("64:ff9b::/96").Contains(ip), netip.MustParsePrefix("::/96").Contains(ip):
			copy(v4[:], b[12:])
			return internal(netip.AddrFrom4(v4))
		case netip.MustParsePrefix("2002::/16").Contains(ip):
			copy(v4[:], b[2:6])
			return internal(netip.AddrFrom4(v4))
		}
	}
	if !ip.IsGlobalUnicast() || ip.IsPrivate() || ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return true
	}
	for _, p := range special {
		if p.Contains(ip) {
			return true
		}
	}
	return false
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
