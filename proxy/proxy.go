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
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Config is what the runner passes, as JSON in argv[1].
type Config struct {
	Allow []Allow           `json:"allow"`
	Hosts map[string]string `json:"hosts"` // pinned names
	// UID and GID: when started as root, the proxy becomes them (the
	// jail's own host ids) before it reads a byte from the jail.
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
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
)

// Main serves the two listeners until the runner ends it (SIGTERM), and
// reports after every connection and at the end. It never returns.
func Main(args []string) {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "jail: proxy: no configuration")
		os.Exit(125)
	}
	var cfg Config
	if err := json.Unmarshal([]byte(args[1]), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "jail: proxy: configuration:", err)
		os.Exit(125)
	}
	if os.Geteuid() == 0 {
		if err := dropRoot(cfg.UID, cfg.GID); err != nil {
			fmt.Fprintln(os.Stderr, "jail: proxy:", err)
			os.Exit(125)
		}
	}
	p := newProxy(cfg, os.NewFile(fdReport, "report"))
	for _, l := range []struct {
		fd    uintptr
		serve func(net.Conn)
	}{{fdHTTP, p.serveHTTP}, {fdSOCKS, p.serveSOCKS}} {
		ln, err := net.FileListener(os.NewFile(l.fd, "listener"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "jail: proxy: listener:", err)
			os.Exit(125)
		}
		go p.accept(ln, l.serve)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	<-term
	p.report()
	os.Exit(0)
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
	denied  map[target]*deniedStat
	allowed map[target]*allowedStat
}

type target struct {
	Host string
	Port uint16
}

type deniedStat struct {
	Count  int
	Reason string
}

type allowedStat struct {
	Connections    int
	BytesIn, Bytes int64 // from the server, to the server
}

func newProxy(cfg Config, out *os.File) *proxy {
	return &proxy{cfg: cfg, out: out, dialer: net.Dialer{Timeout: 30 * time.Second},
		denied: map[target]*deniedStat{}, allowed: map[target]*allowedStat{}}
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
			p.report()
		}()
	}
}

// errDenied is a refusal, with the reason the record gives.
type errDenied struct{ reason string }

func (e *errDenied) Error() string { return e.reason }

// dial checks host:port against the policy, resolves it, and connects to
// an address the policy allows. A refusal is recorded.
func (p *proxy) dial(host string, port uint16) (net.Conn, error) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
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

// permit says which addresses host:port may be reached at.
func (p *proxy) permit(host string, port uint16) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		ip = ip.Unmap()
		if !p.listed(ip.String(), true, port) {
			return nil, errors.New("IP address not on the allowlist")
		}
		return []netip.Addr{ip}, nil
	}
	if !p.listed(host, false, port) {
		return nil, errors.New("not on the allowlist")
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
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
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
		if a.Host == host || a.Wildcard && strings.HasSuffix(host, "."+a.Host) {
			return true
		}
	}
	return false
}

// internal addresses are refused unless named: the host's own services,
// the cloud metadata service (169.254.169.254), private networks.
func internal(ip netip.Addr) bool {
	return ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsPrivate() ||
		ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() ||
		netip.MustParsePrefix("100.64.0.0/10").Contains(ip) // carrier-grade NAT, often internal too
}

func (p *proxy) deny(t target, reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.denied[t]
	if d == nil {
		d = &deniedStat{Reason: reason}
		p.denied[t] = d
	}
	d.Count++
}

// relay copies both ways until either side ends, counting bytes.
func (p *proxy) relay(t target, client net.Conn, server net.Conn, first []byte) {
	p.mu.Lock()
	a := p.allowed[t]
	if a == nil {
		a = &allowedStat{}
		p.allowed[t] = a
	}
	a.Connections++
	p.mu.Unlock()
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
	p.mu.Lock()
	a.BytesIn += down
	a.Bytes += up
	p.mu.Unlock()
}

// report writes the record's network fields, as one line.
func (p *proxy) report() {
	type deniedJSON struct {
		Host   string `json:"host"`
		Port   uint16 `json:"port"`
		Count  int    `json:"count"`
		Reason string `json:"reason"`
	}
	type allowedJSON struct {
		Host        string `json:"host"`
		Port        uint16 `json:"port"`
		Connections int    `json:"connections"`
		BytesIn     int64  `json:"bytes_in"`
		BytesOut    int64  `json:"bytes_out"`
	}
	p.mu.Lock()
	denied := []deniedJSON{}
	for t, d := range p.denied {
		denied = append(denied, deniedJSON{t.Host, t.Port, d.Count, d.Reason})
	}
	allowed := []allowedJSON{}
	for t, a := range p.allowed {
		allowed = append(allowed, allowedJSON{t.Host, t.Port, a.Connections, a.BytesIn, a.Bytes})
	}
	p.mu.Unlock()
	sort.Slice(denied, func(i, j int) bool {
		return denied[i].Host+strconv.Itoa(int(denied[i].Port)) < denied[j].Host+strconv.Itoa(int(denied[j].Port))
	})
	sort.Slice(allowed, func(i, j int) bool {
		return allowed[i].Host+strconv.Itoa(int(allowed[i].Port)) < allowed[j].Host+strconv.Itoa(int(allowed[j].Port))
	})
	d, _ := json.Marshal(denied)
	a, _ := json.Marshal(allowed)
	line := fmt.Sprintf("\"network_denied\":%s,\"network_allowed\":%s\n", d, a)
	p.mu.Lock()
	p.out.WriteString(line)
	p.mu.Unlock()
}
