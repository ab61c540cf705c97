// The network figures: what jail's user-space stack (allowlist mode, no
// proxy variables used) costs a download and a small HTTPS request, each
// against the same curl on the host, side by side, from servers this
// process runs on the host's loopback. Each figure fails on its own, named,
// and the others are still measured.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/internal/stats"
)

// benchHost is the name the jail reaches the bench's servers by, pinned
// to the host's loopback (--pin-host); curl on the host gets it with
// --resolve.
const benchHost = "bench.test"

// NetworkPart is the network figures, each with the exact command lines.
type NetworkPart struct {
	Download DownloadPart `json:"download"`
	HTTPS    HTTPSPart    `json:"https_request"`
}

// NetPath is one way of making the request, its samples and their summary;
// Error says why it has none.
type NetPath struct {
	Name    string    `json:"name"`
	Command string    `json:"command"`
	Unit    string    `json:"unit"`
	Samples []float64 `json:"samples"`
	Median  float64   `json:"median"`
	P95     float64   `json:"p95"`
	Min     float64   `json:"min"`
	Max     float64   `json:"max"`
	Error   string    `json:"error,omitempty"`
}

// DownloadPart is a large plain-HTTP download, on the host and through
// the stack; the ratio is of the median rates (target ≥ 0.5).
type DownloadPart struct {
	Megabytes      int       `json:"megabytes"`
	Runs           int       `json:"runs"`
	Paths          []NetPath `json:"paths"`
	StackHostRatio float64   `json:"stack_host_ratio"`
}

// HTTPSPart is one small HTTPS request (curl's time_total: the jail's
// lookup, the connection through the stack, the TLS handshake, the
// request), on the host, through the stack, and through the stack to a
// host with a credential bound, which jail's helper intercepts (its own
// TLS handshake with the jail, a second one with the server).
type HTTPSPart struct {
	Runs            int       `json:"runs"`
	Paths           []NetPath `json:"paths"`
	StackHostMedian float64   `json:"stack_host_median_ratio"`
	StackMinusHost  float64   `json:"stack_minus_host_median_ms"`
	// InterceptMinusStack is what a binding adds to one request: planning
	// anew (a run with one is never cached) and the interception;
	// InterceptMinusUncached, the interception alone (against the stack
	// path with a secrets file, also planned anew).
	InterceptMinusStack    float64 `json:"intercept_minus_stack_median_ms"`
	InterceptMinusUncached float64 `json:"intercept_minus_uncached_median_ms"`
}

// netServers are the bench's own HTTP and HTTPS servers on 127.0.0.1.
type netServers struct {
	httpPort, tlsPort int
	caFile            string // the HTTPS server's self-signed certificate, PEM
	// bundle is the system's roots and caFile: what curl trusts on the
	// host and through the stack, so that each path parses as many roots
	// as a jail's curl trusting the run CA does (OpenSSL takes ~17 ms
	// for a distribution's bundle), and the intercepted path's extra is
	// the interception's alone.
	bundle string
	dir    string
	srv    []*http.Server
}

// startNetServers starts an HTTP server answering /download with n bytes
// and /small with a few, and an HTTPS one with a fresh self-signed
// certificate for benchHost, both on ephemeral loopback ports.
func startNetServers(n int64) (*netServers, error) {
	dir, err := os.MkdirTemp("", "jail-bench-net-")
	if err != nil {
		return nil, err
	}
	// The jail reads the certificate through --ro-bind as another user.
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &netServers{dir: dir, caFile: filepath.Join(dir, "ca.pem")}
	cert, err := selfSigned(s.caFile)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("certificate: %w", err)
	}
	s.bundle = filepath.Join(dir, "bundle.pem")
	if err := writeBundle(s.bundle, s.caFile); err != nil {
		s.close()
		return nil, fmt.Errorf("bundle: %w", err)
	}
	chunk := make([]byte, 1<<20)
	mux := http.NewServeMux()
	mux.HandleFunc("/download", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		for left := n; left > 0; {
			k, err := w.Write(chunk[:min(left, int64(len(chunk)))])
			if err != nil {
				return
			}
			left -= int64(k)
		}
	})
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	for _, useTLS := range []bool{false, true} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			s.close()
			return nil, err
		}
		// A refused or cut connection is a figure's error, not a log line.
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
		port := l.Addr().(*net.TCPAddr).Port
		if useTLS {
			s.tlsPort = port
			l = tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		} else {
			s.httpPort = port
		}
		s.srv = append(s.srv, srv)
		go srv.Serve(l)
	}
	return s, nil
}

// writeBundle writes the system's CA bundle (Debian's path; none, when
// the host has not it) and the certificate in caFile to path.
func writeBundle(path, caFile string) error {
	roots, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(append(roots, '\n'), ca...), 0o644)
}

// close stops the servers and removes the certificate.
func (s *netServers) close() {
	for _, srv := range s.srv {
		srv.Close()
	}
	os.RemoveAll(s.dir)
}

// selfSigned makes a P-256 certificate for benchHost valid for a day,
// writes it as PEM to path and returns it with its key.
func selfSigned(path string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: benchHost},
		DNSNames:              []string{benchHost},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// The jail's in-jail path of the HTTPS server's certificate.
const jailCA = "/bench-ca.pem"

// netLaunchers returns the host and stack command lines for a URL on
// port (scheme and path around benchHost:port): curl writes its -w figures
// to stdout. The jail's curl ignores the profile's proxy variables
// (--noproxy '*'), so the stack carries it. hostArgs are more curl
// arguments (a --cacert is mapped to the jail's copy), jailArgs more jail
// flags.
func netLaunchers(jail, curl, scheme string, port int, path string, curlArgs, hostArgs, jailArgs []string) (host, stack launcher) {
	url := fmt.Sprintf("%s://%s:%d%s", scheme, benchHost, port, path)
	common := append([]string{"-sS", "-o", "/dev/null", "--noproxy", "*"}, curlArgs...)
	host = launcher{Name: "host", Argv: slices.Concat([]string{curl},
		common, []string{"--resolve", fmt.Sprintf("%s:%d:127.0.0.1", benchHost, port)}, hostArgs, []string{url})}
	stack = launcher{Name: "jail-stack", Argv: slices.Concat([]string{jail, "-p", "default",
		"--allow", fmt.Sprintf("%s:%d", benchHost, port), "--pin-host", benchHost + "=127.0.0.1"},
		jailArgs, []string{"--", curl}, common, hostArgsInJail(hostArgs), []string{url})}
	return host, stack
}

// interceptLaunchers are stack's request planned anew (a secrets file:
// such a run is never cached), and with a credential bound to benchHost:
// the jail's curl trusts the run CA through the bundle (so no --cacert),
// and the helper trusts the bench's server through network.upstream_ca.
func interceptLaunchers(s *netServers, stack launcher) (uncached, intercept launcher, err error) {
	profile := filepath.Join(s.dir, "intercept.toml")
	secrets := filepath.Join(s.dir, "secrets")
	text := fmt.Sprintf("extends = \"default\"\n[network]\nmode = \"allowlist\"\nupstream_ca = %q\n", s.caFile)
	if err := os.WriteFile(profile, []byte(text), 0o644); err != nil {
		return uncached, intercept, err
	}
	if err := os.WriteFile(secrets, []byte("BENCH_KEY=bench-value\n"), 0o600); err != nil {
		return uncached, intercept, err
	}
	uncached = launcher{Name: "jail-uncached", Argv: slices.Concat(stack.Argv[:1], []string{"--secrets", secrets}, stack.Argv[1:])}
	var argv []string
	for i := 0; i < len(stack.Argv); i++ {
		switch a := stack.Argv[i]; {
		case a == "default" && i > 0 && stack.Argv[i-1] == "-p":
			argv = append(argv, profile, "--secrets", secrets, "--credential", "BENCH_KEY@"+benchHost)
		case a == "--cacert":
			i++ // the jail's curl must trust the run CA
		case a == "--ro-bind" && i+1 < len(stack.Argv) && strings.HasSuffix(stack.Argv[i+1], ":"+jailCA):
			i++
		default:
			argv = append(argv, a)
		}
	}
	return uncached, launcher{Name: "jail-intercept", Argv: argv}, nil
}

// hostArgsInJail maps the host curl's --cacert to the jail's copy.
func hostArgsInJail(args []string) []string {
	out := slices.Clone(args)
	for i := 0; i+1 < len(out); i++ {
		if out[i] == "--cacert" {
			out[i+1] = jailCA
		}
	}
	return out
}

// curlOutput runs l once (killed after timeout) and returns what it
// printed on stdout; an error names the command and quotes its stderr.
func curlOutput(l launcher, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.Argv[0], l.Argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v, killed", timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = "(empty)"
		}
		return "", fmt.Errorf("%v\n  command: %s\n  stderr: %s", err, shellQuote(l.Argv), strings.ReplaceAll(msg, "\n", "\n          "))
	}
	return stdout.String(), nil
}

// sampleFunc turns one call's curl output into a sample.
type sampleFunc func(out string) (float64, error)

// measurePaths runs the launchers in turn, warmup rounds not counted, then
// runs rounds, and summarises each; a launcher that fails once gets no
// more calls and keeps its error, the others go on.
func measurePaths(ls []launcher, unit string, warmup, runs int, timeout time.Duration, sample sampleFunc) []NetPath {
	paths := make([]NetPath, len(ls))
	for i, l := range ls {
		paths[i] = NetPath{Name: l.Name, Command: shellQuote(l.Argv), Unit: unit, Samples: []float64{}}
	}
	for round := range warmup + runs {
		for i, l := range ls {
			if paths[i].Error != "" {
				continue
			}
			out, err := curlOutput(l, timeout)
			var v float64
			if err == nil {
				v, err = sample(out)
			}
			if err != nil {
				paths[i].Error = err.Error()
				continue
			}
			if round >= warmup {
				paths[i].Samples = append(paths[i].Samples, roundTo(v, 3))
			}
		}
	}
	for i := range paths {
		xs := slices.Sorted(slices.Values(paths[i].Samples))
		if len(xs) > 0 {
			paths[i].Median = roundTo(stats.Median(xs), 3)
			paths[i].P95 = stats.Percentile(xs, 95)
			paths[i].Min, paths[i].Max = xs[0], xs[len(xs)-1]
		}
	}
	return paths
}

// rate reads curl's "%{size_download} %{time_total}" as MB/s, checking the
// whole body came.
func rate(want int64) sampleFunc {
	return func(out string) (float64, error) {
		f := strings.Fields(out)
		if len(f) != 2 {
			return 0, fmt.Errorf("curl -w printed %q", out)
		}
		size, err1 := strconv.ParseFloat(f[0], 64)
		secs, err2 := strconv.ParseFloat(f[1], 64)
		switch {
		case err1 != nil || err2 != nil || secs <= 0:
			return 0, fmt.Errorf("curl -w printed %q", out)
		case int64(size) != want:
			return 0, fmt.Errorf("downloaded %d bytes, want %d", int64(size), want)
		}
		return size / secs / 1e6, nil
	}
}

// requestMs reads curl's "%{time_total}" as milliseconds.
func requestMs(out string) (float64, error) {
	secs, err := strconv.ParseFloat(strings.TrimSpace(out), 64)
	if err != nil {
		return 0, fmt.Errorf("curl -w printed %q", out)
	}
	return secs * 1000, nil
}

// networkPart measures the download and the HTTPS request; failed names
// each figure that could not be measured, and why.
func networkPart(cfg config) (p NetworkPart, failed []string) {
	fail := func(figure, why string) { failed = append(failed, figure+": "+why) }
	n := int64(cfg.downloadMB) << 20
	p.Download = DownloadPart{Megabytes: cfg.downloadMB, Runs: cfg.netRuns}
	p.HTTPS = HTTPSPart{Runs: cfg.httpsRuns}
	curl, err := exec.LookPath("curl")
	if err != nil {
		fail("network", "curl not found on PATH; install curl (apt-get install -y curl) or run `make bench`")
		return p, failed
	}
	jail, err := resolveExe(cfg.jail)
	if err != nil {
		fail("network", err.Error())
		return p, failed
	}
	s, err := startNetServers(n)
	if err != nil {
		fail("network", "servers: "+err.Error())
		return p, failed
	}
	defer s.close()

	host, stack := netLaunchers(jail, curl, "http", s.httpPort, "/download",
		[]string{"-w", "%{size_download} %{time_total}"}, nil, nil)
	p.Download.Paths = measurePaths([]launcher{host, stack}, "MB/s", 1, cfg.netRuns, 4*cfg.timeout, rate(n))
	p.Download.StackHostRatio = stats.Ratio(p.Download.Paths[1].Median, p.Download.Paths[0].Median)

	host, stack = netLaunchers(jail, curl, "https", s.tlsPort, "/small",
		[]string{"-w", "%{time_total}"}, []string{"--cacert", s.bundle}, []string{"--ro-bind", s.bundle + ":" + jailCA})
	uncached, intercept, err := interceptLaunchers(s, stack)
	if err != nil {
		fail("https request (jail-intercept)", err.Error())
		return p, failed
	}
	p.HTTPS.Paths = measurePaths([]launcher{host, stack, uncached, intercept}, "ms", 2, cfg.httpsRuns, cfg.timeout, requestMs)
	h, j, u, i := p.HTTPS.Paths[0].Median, p.HTTPS.Paths[1].Median, p.HTTPS.Paths[2].Median, p.HTTPS.Paths[3].Median
	p.HTTPS.StackHostMedian = stats.Ratio(j, h)
	p.HTTPS.StackMinusHost = roundTo(j-h, 3)
	p.HTTPS.InterceptMinusStack = roundTo(i-j, 3)
	p.HTTPS.InterceptMinusUncached = roundTo(i-u, 3)

	for _, f := range []struct {
		figure string
		paths  []NetPath
	}{{"download", p.Download.Paths}, {"https request", p.HTTPS.Paths}} {
		for _, path := range f.paths {
			if path.Error != "" {
				fail(f.figure+" ("+path.Name+")", path.Error)
			}
		}
	}
	return p, failed
}

// printNetwork prints both figures and their ratios.
func printNetwork(w io.Writer, p NetworkPart, t TargetValues) {
	fmt.Fprintln(w, "  command lines:")
	for _, path := range slices.Concat(p.Download.Paths, p.HTTPS.Paths) {
		fmt.Fprintf(w, "    %-14s %s\n", path.Name, path.Command)
	}
	fmt.Fprintf(w, "  download of %d MB (MB/s, curl's size/time_total), %d runs each:\n", p.Download.Megabytes, p.Download.Runs)
	printPaths(w, p.Download.Paths)
	if ok := p.Download.Paths[0].Error == "" && p.Download.Paths[1].Error == ""; ok {
		fmt.Fprintf(w, "  ratio jail-stack/host of the median rates: %5.2f   %s\n", p.Download.StackHostRatio,
			verdict(p.Download.StackHostRatio >= t.DownloadRatioMin, "≥", t.DownloadRatioMin))
	} else {
		fmt.Fprintln(w, "  ratio jail-stack/host of the median rates: FAILED (see above)")
	}
	fmt.Fprintf(w, "  one small HTTPS request (ms, curl's time_total), %d runs each:\n", p.HTTPS.Runs)
	printPaths(w, p.HTTPS.Paths)
	if p.HTTPS.Paths[0].Error == "" && p.HTTPS.Paths[1].Error == "" {
		fmt.Fprintf(w, "  jail-stack - host of the medians: %+.2f ms, ratio %5.2f\n", p.HTTPS.StackMinusHost, p.HTTPS.StackHostMedian)
	} else {
		fmt.Fprintln(w, "  jail-stack - host of the medians: FAILED (see above)")
	}
	if len(p.HTTPS.Paths) > 3 && p.HTTPS.Paths[1].Error == "" && p.HTTPS.Paths[2].Error == "" && p.HTTPS.Paths[3].Error == "" {
		fmt.Fprintf(w, "  jail-intercept - jail-stack of the medians (what a credential binding adds): %+.2f ms\n", p.HTTPS.InterceptMinusStack)
		fmt.Fprintf(w, "  jail-intercept - jail-uncached (the interception alone; both plan anew): %+.2f ms\n", p.HTTPS.InterceptMinusUncached)
	} else {
		fmt.Fprintln(w, "  jail-intercept - jail-stack of the medians: FAILED (see above)")
	}
}

// printPaths prints each path's summary, or FAILED and why.
func printPaths(w io.Writer, paths []NetPath) {
	for _, p := range paths {
		if p.Error != "" {
			fmt.Fprintf(w, "    %-14s FAILED: %s\n", p.Name, strings.ReplaceAll(p.Error, "\n", "\n                   "))
			continue
		}
		fmt.Fprintf(w, "    %-14s median %9.2f  p95 %9.2f  min %9.2f  max %9.2f  %s\n", p.Name, p.Median, p.P95, p.Min, p.Max, p.Unit)
	}
}

// roundTo rounds x to the given number of decimals.
func roundTo(x float64, decimals int) float64 {
	return roundAll([]float64{x}, decimals)[0]
}

// errFigures is returned by run when some figures could not be measured,
// after every other figure was printed and written.
var errFigures = errors.New("some figures could not be measured")
