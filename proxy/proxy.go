// Package proxy is the jail's network helper, outside the jail: its
// resolver (127.0.0.1:53 inside the jail, in modes "none" and
// "allowlist"), and in "allowlist" the policy and relay behind the
// user-space stack on the jail's TUN device plus an HTTP proxy (plain
// requests and CONNECT) and a SOCKS5 proxy on the jail's loopback. PID 1
// makes the sockets and the device, the runner hands them over, and the
// helper dials out from the host's namespaces. It lets through only the
// names on the allowlist: the resolver answers them with fake addresses
// that map back to the name, and refuses the rest; it refuses IP literals
// the list does not name and names that resolve to loopback, link-local,
// private or other special addresses or the host's own unless pinned or
// named, and checks, however the jail connects, that a connection to port
// 443 sends the SNI of its name and one to port 80 the Host in each
// request. The jail has no other route out, so the list is enforced, not
// advisory.
package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Config is what the runner passes, as JSON on fdConfig.
type Config struct {
	// Mode is the jail's network: "none" (the resolver refuses every
	// name) or "allowlist".
	Mode  string            `json:"mode"`
	Allow []Allow           `json:"allow"`
	Hosts map[string]string `json:"hosts"` // pinned names
	// UID and GID: when started as root, the proxy becomes them (the
	// jail's own host ids) before it reads a byte from the jail.
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
	// Profile names the run's profile, for the line that tells the
	// agent how to allow a refused host.
	Profile string `json:"profile"`

	// Credentials are the run's bindings; none: nothing is intercepted.
	Credentials []Credential `json:"credentials,omitempty"`
	// CACert and CAKey are the run's certificate authority (DER; the key
	// PKCS #8), which signs a certificate for each intercepted host.
	CACert []byte `json:"ca_cert,omitempty"`
	CAKey  []byte `json:"ca_key,omitempty"`
	// UpstreamCA is PEM: roots trusted, besides the host's system roots, for
	// the servers of intercepted hosts only (network.upstream_ca).
	UpstreamCA []byte `json:"upstream_ca,omitempty"`

	// resolver is the host's resolver; nil is the system's. Tests set
	// one whose server they run.
	resolver *net.Resolver
}

// Allow is one allowlist entry (jail.AllowEntry).
type Allow struct {
	Host     string `json:"host"`
	Wildcard bool   `json:"wildcard"`
	IP       bool   `json:"ip"`
	Port     uint16 `json:"port"`
}

// Credential is one binding: the real Value replaces Placeholder in the
// requests to Hosts (only in header Header, when set).
type Credential struct {
	Env         string   `json:"env"`
	Hosts       []string `json:"hosts"` // exact names, lower case, each also on the allowlist
	Header      string   `json:"header,omitempty"`
	Placeholder string   `json:"placeholder"`
	Value       string   `json:"value"`
}

// Fds the runner passes (docs/design/netstack.md §1).
const (
	fdReport = 3
	fdConfig = 4 // the Config, as JSON, then EOF
	// fdLifeline is a pipe whose write end only the runner holds: EOF on
	// it is the runner's end, however it ended, even before the proxy
	// started (a parent-death signal set after its parent died never
	// comes).
	fdLifeline = 5
	fdDNSUDP   = 6 // bound to 127.0.0.1:53 in the jail
	fdDNSTCP   = 7 // listening on 127.0.0.1:53 in the jail
	// Mode "allowlist" only:
	fdHTTP  = 8  // listening on 127.0.0.1:3128
	fdSOCKS = 9  // listening on 127.0.0.1:1080
	fdTUN   = 10 // jail0, up, IFF_TUN|IFF_NO_PI|IFF_VNET_HDR
	// Then the taps (taps.go), when the device was made on first use.
)

// stopByte, on the lifeline, asks for the end: the last report, then exit
// (jail/proxyctl.c's proxy_stop).
const stopByte = 'S'

// Bounds on what a jail can make the proxy hold: it runs outside the
// jail's namespaces, in its cgroup.
const (
	maxHeader = 64 << 10 // a request line and headers
	maxConns  = 256      // open through the two proxies together
	// maxUpstreams bounds the connections intercepted sessions hold to
	// real servers, all together: an HTTP/1.1 server takes one per
	// request at once, and 256 jail connections of 32 requests each
	// would be 8192, past the helper's descriptors.
	maxUpstreams = 256
	maxFiles     = 4096 // the helper's descriptors (RLIMIT_NOFILE)
	maxEntries   = 256  // distinct refusals and destinations recorded
	memLimit     = 256 << 20
	// A recorded name and reason, in bytes: with maxEntries of each
	// kind a report line stays under the 256 KiB the runner reads.
	maxName   = 253
	maxReason = 200
)

// Main serves the resolver, and in mode "allowlist" the stack and the
// two proxies, until the runner ends it (stopByte) or dies, and reports at
// most once a second and at the end. It never returns.
func Main(args []string) {
	debug.SetMemoryLimit(memLimit)
	// Before the configuration is read: the helper may hold real
	// credential values and the run CA's key, which no core dump may
	// write out and no process of its uid (an unprivileged caller's
	// other programs) may read by ptrace or /proc/PID/mem.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fail(os.NewFile(fdReport, "report"), fmt.Errorf("not dumpable: %w", err))
	}
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
	if err == nil && cfg.Mode != "none" && cfg.Mode != "allowlist" {
		err = fmt.Errorf("mode %q", cfg.Mode)
	}
	// The run's certificate authority and bindings, checked before
	// anything is served: a bad one ends the run, not its first request.
	var creds *credentials
	if err == nil {
		creds, err = newCredentials(cfg)
	}
	if err != nil {
		fail(report, fmt.Errorf("configuration: %w", err))
	}
	local, err := hostAddrs()
	if err != nil {
		fail(report, err)
	}
	if err := limitFiles(); err != nil {
		fail(report, err)
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
	// Again: a uid change resets it to the host's suid_dumpable.
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	// The runner asks for the end with stopByte on the lifeline: a byte
	// waits in the pipe until read, where a signal that came before the
	// runtime had its handler would end the helper without its last
	// report, and a run that ends a moment after the helper started (a
	// connection the kernel reset at once: taps.go) would lose it.
	stop := make(chan struct{})
	go func() {
		var b [1]byte
		if n, _ := lifeline.Read(b[:]); n == 1 && b[0] == stopByte {
			close(stop)
			lifeline.Read(b[:])
		}
		os.Exit(125) // EOF, or an error: the runner is gone
	}()
	// From outside, SIGTERM asks the same.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	p := newProxy(cfg, report)
	p.local = local
	p.creds = creds
	die := func(err error) {
		p.mu.Lock() // no report is written meanwhile
		fail(report, err)
	}
	go func() {
		for range time.Tick(time.Second) {
			p.reportIfChanged()
		}
	}()
	pc, err := net.FilePacketConn(os.NewFile(fdDNSUDP, "dns-udp"))
	if err != nil {
		die(fmt.Errorf("resolver socket: %w", err))
	}
	go p.serveDNSUDP(pc)
	dl, err := net.FileListener(os.NewFile(fdDNSTCP, "dns-tcp"))
	if err != nil {
		die(fmt.Errorf("resolver listener: %w", err))
	}
	go p.serveDNSTCP(dl)
	if cfg.Mode == "allowlist" {
		for _, l := range []struct {
			fd    uintptr
			serve func(net.Conn)
		}{{fdHTTP, p.serveHTTP}, {fdSOCKS, p.serveSOCKS}} {
			ln, err := net.FileListener(os.NewFile(l.fd, "listener"))
			if err != nil {
				die(fmt.Errorf("listener: %w", err))
			}
			go p.accept(ln, l.serve)
		}
		if err := serveTUN(fdTUN, &transparent{p}, die); err != nil {
			die(fmt.Errorf("network stack: %w", err))
		}
		p.drainTaps(netFds())
	}
	select {
	case <-stop:
	case <-term:
	}
	p.settle(settleTime)
	p.report()
	os.Exit(0)
}

// fail tells the runner why the proxy ends, on one line, and ends it.
func fail(report *os.File, err error) {
	fmt.Fprintln(report, "jail: network helper:", strings.ReplaceAll(err.Error(), "\n", " "))
	os.Exit(125)
}

// limitFiles sets the helper's limit on open descriptors, soft and hard,
// to maxFiles (or the hard limit, if lower and it may not raise it): room
// for the stack's and the proxies' connections, but no more of the
// host's.
func limitFiles() error {
	if unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: maxFiles, Max: maxFiles}) == nil {
		return nil
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("descriptor limit: %w", err)
	}
	if lim.Max < maxFiles {
		lim.Cur = lim.Max
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("descriptor limit: %w", err)
	}
	return nil
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
	cfg Config
	// dialer connects on the host (a net.Dialer; tests redirect it).
	dialer interface {
		Dial(network, address string) (net.Conn, error)
	}
	out   *os.File
	names *names
	// local is the host's own addresses, refused unless pinned or named
	// like internal ones.
	local map[netip.Addr]bool
	// conns holds a token for each connection the two proxies serve.
	conns chan struct{}
	// upstreams holds a token for each connection to a real server an
	// intercepted session has open (maxUpstreams).
	upstreams chan struct{}
	// creds is the run's bindings, nil when it has none.
	creds *credentials
	// pieces is the budget of the relays' flow pieces.
	pieces *pieceStore
	// handshakes counts the interceptions whose TLS handshake is under
	// way: its outcome (a refused certificate) belongs in the last report.
	handshakes sync.WaitGroup
	// relays is the relays' jail sides under way, which the end of a run
	// waits for.
	relays *relays
	// halfOpenIdle is how long a connection whose server ended its side
	// may go without progress on the jail's side before it is reset
	// (halfOpen).
	halfOpenIdle time.Duration

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
	Kind   string // kindLookup, kindTCP, kindUDP
}

type allowedStat struct {
	Connections    int
	BytesIn, Bytes int64 // from the server, to the server
}

func newProxy(cfg Config, out *os.File) *proxy {
	return &proxy{cfg: cfg, out: out, dialer: &net.Dialer{Timeout: 10 * time.Second}, names: newNames(),
		conns: make(chan struct{}, maxConns), upstreams: make(chan struct{}, maxUpstreams),
		pieces: newPieceStore(flowBudget), relays: newRelays(), halfOpenIdle: halfOpenIdle,
		denied: map[refusal]int{}, allowed: map[target]*allowedStat{}}
}

// accept serves the connections to a proxy's listener; past maxConns
// open through both proxies, a connection is closed and recorded, as the
// stack's past its own limit.
func (p *proxy) accept(ln net.Listener, serve func(net.Conn)) {
	acceptLimited(ln, p.conns, serve, func(c net.Conn) {
		t := target{"(a proxy)", 0}
		if a, err := netip.ParseAddrPort(c.LocalAddr().String()); err == nil {
			t = target{a.Addr().Unmap().String(), a.Port()}
		}
		p.deny(kindTCP, t, "too many connections")
	})
}

// acceptLimited serves each connection to ln in a goroutine, holding a
// slot of slots while it does; one that finds them all taken is told to
// full (nil: nothing) and closed at once. It returns when ln is closed.
func acceptLimited(ln net.Listener, slots chan struct{}, serve, full func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		select {
		case slots <- struct{}{}:
		default:
			// Recorded before the close, which the client sees: a
			// refusal it saw is already in the report.
			if full != nil {
				full(c)
			}
			c.Close()
			continue
		}
		go func() {
			defer func() { <-slots }()
			defer c.Close()
			serve(c)
		}()
	}
}
