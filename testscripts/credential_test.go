package testscripts

// Credential injection end to end (issue 13): real jails, real curl,
// python and node inside, a real HTTPS server (HTTP/1.1 and HTTP/2) on the
// host with its own CA, trusted only through network.upstream_ca. The
// server must see the real value; nothing in the jail, the record, the
// audit log or `jail profile show` may hold it.

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/testcert"
	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/plancache"
)

// realValue is the secret; it must reach the server and nothing else.
const realValue = "sk-real-4f1d9c2e7a-DO-NOT-LEAK"

// seenRequest is what the upstream server saw of one request.
type seenRequest struct {
	Proto, Host, Auth, APIKey, Other string
}

// upstream is an HTTPS server (h2 and HTTP/1.1) with a certificate for
// api.test and other.test from its own CA, and a plain HTTP one; both
// log what they see.
type upstream struct {
	caFile           string
	tlsPort, rawPort string
	mu               sync.Mutex
	seen             []seenRequest
}

func (u *upstream) requests() []seenRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seenRequest(nil), u.seen...)
}

func startUpstream(t *testing.T, dir string) *upstream {
	t.Helper()
	ca, caKey := testcert.CA(t, "test upstream CA")
	leaf := testcert.Leaf(t, ca, caKey, "api.test", "other.test")
	u := &upstream{caFile: filepath.Join(dir, "upstream-ca.pem")}
	if err := os.WriteFile(u.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		u.mu.Lock()
		u.seen = append(u.seen, seenRequest{r.Proto, r.Host, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("X-Other")})
		u.mu.Unlock()
		fmt.Fprintf(w, "%s ok\n", r.Proto)
	})
	listen := func() (net.Listener, string) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ := net.SplitHostPort(l.Addr().String())
		return l, port
	}
	tl, tlsPort := listen()
	rl, rawPort := listen()
	u.tlsPort, u.rawPort = tlsPort, rawPort
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{leaf},
		NextProtos:   []string{"h2", "http/1.1"},
	}}
	go srv.ServeTLS(tl, "", "")
	raw := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go raw.Serve(rl)
	t.Cleanup(func() { srv.Close(); raw.Close() })
	return u
}

// credentialRun runs sh -c script in a jail with EXAMPLE_API_KEY bound to
// api.test, other.test allowed, and returns its output and record.
func credentialRun(t *testing.T, dir string, u *upstream, script string, extra ...string) (stdout, stderr string, st jail.Status) {
	t.Helper()
	args := append([]string{"-p", filepath.Join(dir, "cred.toml"),
		"--allow", "api.test:" + u.tlsPort, "--allow", "other.test:" + u.rawPort,
		"--pin-host", "api.test=127.0.0.1", "--pin-host", "other.test=127.0.0.1",
		"--secrets", filepath.Join(dir, "secrets"), "--credential", "EXAMPLE_API_KEY@api.test",
		"--ro-bind", u.caFile + ":/upstream-ca.pem",
		"--env", "TLS=" + u.tlsPort, "--env", "RAW=" + u.rawPort,
		"--status-json", filepath.Join(dir, "st.json"), "--audit-log", filepath.Join(dir, "audit.log")},
		extra...)
	args = append(args, "--", "sh", "-c", script)
	cmd := exec.Command(filepath.Join(s.binDir, "jail"), args...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "EXAMPLE_API_KEY=" + realValue + "-from-host-env"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	timer := time.AfterFunc(90*time.Second, func() { cmd.Process.Kill() })
	err := cmd.Run()
	timer.Stop()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	rec, err := os.ReadFile(filepath.Join(dir, "st.json"))
	if err != nil {
		t.Fatalf("no record: %v; stderr: %s", err, errb.String())
	}
	if err := json.Unmarshal(rec, &st); err != nil {
		t.Fatalf("record: %v: %s", err, rec)
	}
	return out.String(), errb.String(), st
}

func credentialDir(t *testing.T) (string, *upstream) {
	if os.Geteuid() != 0 {
		t.Skip("allowlist mode opens /dev/net/tun, 0600 on this host: root only")
	}
	dir, err := os.MkdirTemp(s.workRoot, "cred-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	u := startUpstream(t, dir)
	files := map[string]string{
		"cred.toml": "extends = \"default\"\n[network]\nmode = \"allowlist\"\nupstream_ca = \"" + u.caFile + "\"\n",
		"secrets":   "EXAMPLE_API_KEY=" + realValue + "\nPLAIN_SECRET=plain-value\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(dir, "cred.toml"), 0o644)
	return dir, u
}

// The placeholder goes out from curl (HTTP/1.1 and HTTP/2), python's
// urllib and node's https, trusting the run CA through the distribution
// bundle and the variables, and the server receives the real value; a
// second host receives the placeholder unchanged, and the record counts
// that; nothing in the jail holds the real value.
func TestCredentialInjection(t *testing.T) {
	dir, u := credentialDir(t)
	script := `
unset HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy
echo "placeholder: $EXAMPLE_API_KEY"
echo "curl1: $(curl -sS -m 20 --http1.1 -H "Authorization: Bearer $EXAMPLE_API_KEY" https://api.test:$TLS/curl1)"
echo "curl2: $(curl -sS -m 20 --http2 -H "x-api-key: $EXAMPLE_API_KEY" https://api.test:$TLS/curl2)"
echo "proxied: $(curl -sS -m 20 --proxy http://127.0.0.1:3128 -H "Authorization: Bearer $EXAMPLE_API_KEY" https://api.test:$TLS/proxied)"
python3 -c '
import os, urllib.request
r = urllib.request.Request("https://api.test:%s/py" % os.environ["TLS"], headers={"Authorization": "Bearer " + os.environ["EXAMPLE_API_KEY"]})
print("python:", urllib.request.urlopen(r, timeout=20).read().decode().strip())'
node -e '
const https = require("https");
https.get({host: "api.test", port: process.env.TLS, path: "/node", headers: {authorization: "Bearer " + process.env.EXAMPLE_API_KEY}},
  r => { let b = ""; r.on("data", d => b += d); r.on("end", () => console.log("node: " + b.trim())); })
  .on("error", e => console.log("node: " + e.message));'
echo "misuse: $(curl -sS -m 20 --proxy http://127.0.0.1:3128 -H "Authorization: Bearer $EXAMPLE_API_KEY" http://other.test:$RAW/misuse)"
echo "env: $(env | grep -c -F "$REAL")"
echo "environ: $(cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep -c -F "$REAL")"
echo "files: $(grep -r -l -s -F "$REAL" / --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr | head -3)"
echo "bundle: $(grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt) $SSL_CERT_FILE"
echo "plain: $PLAIN_SECRET"
`
	// $REAL is the value to look for, given so that the script itself
	// does not hold it in a file: the jail's environment then would.
	// Only its first half: a match on it is a match on the whole.
	half := realValue[:len(realValue)/2]
	out, stderr, st := credentialRun(t, dir, u, strings.ReplaceAll(script, `"$REAL"`, `"`+half+`"`))
	t.Logf("stdout:\n%s\nstderr:\n%s", out, stderr)
	want := []string{
		`(?m)^placeholder: jail-placeholder-[0-9a-f]{32}$`,
		`(?m)^curl1: HTTP/[12].[01] ok$`,
		`(?m)^curl2: HTTP/2.0 ok$`,
		`(?m)^proxied: HTTP/[12].[01] ok$`,
		`(?m)^python: HTTP/[12].[01] ok$`,
		`(?m)^node: HTTP/[12].[01] ok$`,
		`(?m)^misuse: HTTP/1.1 ok$`,
		`(?m)^env: 0$`, `(?m)^environ: 0$`, `(?m)^files: $`,
		`(?m)^bundle: [0-9]{2,} /etc/ssl/certs/ca-certificates.crt$`,
		`(?m)^plain: plain-value$`,
	}
	for _, re := range want {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("stdout lacks %s", re)
		}
	}
	ph := regexp.MustCompile(`jail-placeholder-[0-9a-f]{32}`).FindString(out)
	for _, r := range u.requests() {
		switch {
		case strings.Contains(r.Auth+r.APIKey, "from-host-env"):
			t.Errorf("the host environment's value reached the server: %+v", r)
		case strings.HasPrefix(r.Host, "api.test") && r.Auth != "Bearer "+realValue && r.APIKey != realValue:
			t.Errorf("api.test got %+v, want the real value", r)
		case strings.HasPrefix(r.Host, "other.test") && r.Auth != "Bearer "+ph:
			t.Errorf("other.test got %+v, want the placeholder unchanged", r)
		}
	}
	if len(u.requests()) != 6 {
		t.Errorf("the server saw %d requests, want 6: %+v", len(u.requests()), u.requests())
	}
	sawH2 := false
	for _, r := range u.requests() {
		sawH2 = sawH2 || r.Proto == "HTTP/2.0" && r.APIKey == realValue
	}
	if !sawH2 {
		t.Error("no HTTP/2 request reached the server with the value")
	}

	// The record: the binding, the CA, what went where; never the value.
	if len(st.Credentials) != 1 || st.Credentials[0].Env != "EXAMPLE_API_KEY" || st.Credentials[0].Hosts[0] != "api.test" {
		t.Errorf("record credentials %+v", st.Credentials)
	}
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(st.CredentialCA) {
		t.Errorf("record credential_ca %q", st.CredentialCA)
	}
	if st.Secrets["PLAIN_SECRET"] != "***" || st.Secrets["EXAMPLE_API_KEY"] != "" {
		t.Errorf("record secrets %v", st.Secrets)
	}
	rec, _ := os.ReadFile(filepath.Join(dir, "st.json"))
	audit, _ := os.ReadFile(filepath.Join(dir, "audit.log"))
	for name, b := range map[string][]byte{"record": rec, "audit log": audit, "stderr": []byte(stderr)} {
		if bytes.Contains(b, []byte(realValue)) || bytes.Contains(b, []byte(ph)) {
			t.Errorf("the %s holds the value or the placeholder", name)
		}
	}
	for _, s := range []string{`"credential_use":[{"env":"EXAMPLE_API_KEY","host":"api.test","requests":5`, `"credential_misuse":[{"env":"EXAMPLE_API_KEY","host":"other.test","requests":1}]`} {
		if !bytes.Contains(rec, []byte(s)) {
			t.Errorf("record lacks %s:\n%s", s, rec)
		}
	}
}

// A program that trusts only its own roots (it pins) fails with its own
// TLS error, and jail's stderr says the host was intercepted; a second
// run gets a new placeholder and CA, and the plan, which held the value
// and the CA's key, was never cached.
func TestCredentialPinnedAndPerRun(t *testing.T) {
	dir, u := credentialDir(t)
	script := `unset HTTPS_PROXY https_proxy
echo "placeholder: $EXAMPLE_API_KEY"
curl -sS -m 20 --cacert /upstream-ca.pem -H "Authorization: Bearer $EXAMPLE_API_KEY" https://api.test:$TLS/pinned; echo "pinned: exit $?"`
	out1, stderr, st1 := credentialRun(t, dir, u, script)
	if !regexp.MustCompile(`(?m)^pinned: exit [1-9][0-9]*$`).MatchString(out1) {
		t.Errorf("curl pinned to the upstream CA did not fail:\n%s", out1)
	}
	if !regexp.MustCompile(`(?m)^jail: network: api.test:[0-9]+ was intercepted to inject EXAMPLE_API_KEY`).MatchString(stderr) {
		t.Errorf("stderr does not say the host was intercepted:\n%s", stderr)
	}
	for _, r := range u.requests() {
		t.Errorf("the server saw a request: %+v", r)
	}
	out2, _, st2 := credentialRun(t, dir, u, script)
	ph := regexp.MustCompile(`jail-placeholder-[0-9a-f]{32}`)
	if a, b := ph.FindString(out1), ph.FindString(out2); a == "" || a == b {
		t.Errorf("placeholders %q and %q: want a new one per run", a, b)
	}
	if st1.CredentialCA == st2.CredentialCA || st2.PlanCached {
		t.Errorf("CA %s then %s, plan cached %v: want a new CA per run, never a cached plan", st1.CredentialCA, st2.CredentialCA, st2.PlanCached)
	}
	// The CA's key was only ever in memory: nothing jail keeps on disk
	// (its state: plan cache, compiled filters, sessions) holds it, the
	// value or a placeholder, after the runs.
	state := plancache.StateDir()
	filepath.WalkDir(state, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		// (Not "PRIVATE KEY": the run CA's key is never PEM, and other
		// tests' plans may hold a world-readable key file's copy.)
		for _, needle := range []string{`"ca_key"`, realValue, ph.FindString(out1), ph.FindString(out2)} {
			if bytes.Contains(b, []byte(needle)) {
				t.Errorf("%s holds %q", path, needle)
			}
		}
		return nil
	})
}

// `jail profile show` prints the binding with *** for the value.
func TestCredentialProfileShow(t *testing.T) {
	dir, _ := credentialDir(t)
	out, err := exec.Command(filepath.Join(s.binDir, "jail"), "profile", "show", "-p", filepath.Join(dir, "cred.toml"),
		"--allow", "api.test", "--secrets", filepath.Join(dir, "secrets"), "--credential", "EXAMPLE_API_KEY@api.test").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !bytes.Contains(out, []byte("[[credential]]\nenv = \"EXAMPLE_API_KEY\" # value: *** (from the secrets file)\nhosts = [\"api.test\"]")) ||
		bytes.Contains(out, []byte(realValue)) {
		t.Errorf("profile show:\n%s", out)
	}
}

// credentialRunWhile starts a jail that makes one intercepted request and
// then sleeps 3 s, for a test to look at its processes meanwhile; marker
// is on the runner's command line. Its stdout comes on done, "" when the
// run failed (credentialRun said why).
func credentialRunWhile(t *testing.T, dir string, u *upstream, what string) (marker string, done <-chan string) {
	marker = fmt.Sprintf("marker-%s-%d", what, time.Now().UnixNano())
	ch := make(chan string, 1)
	go func() {
		out := ""
		defer func() { ch <- out }()
		out, _, _ = credentialRun(t, dir, u, `curl -sS -m 20 https://api.test:$TLS/x; sleep 3; echo `+marker)
	}()
	return marker, ch
}

// The helper holds the real value and the CA's key: it is not dumpable,
// so its /proc files belong to root, not to the uid it runs as, and no
// process of that uid may ptrace it or read its memory.
func TestCredentialHelperNotDumpable(t *testing.T) {
	dir, u := credentialDir(t)
	marker, done := credentialRunWhile(t, dir, u, "dumpable")
	var helper int
	for deadline := time.Now().Add(10 * time.Second); helper == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, parent := range procsHolding(marker) {
			for _, c := range childrenOf(parent) {
				if argv0(c) == "jail-proxy" {
					helper = c
				}
			}
		}
	}
	if helper == 0 {
		t.Fatal("no network helper found")
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", helper))
	if err != nil {
		t.Fatal(err)
	}
	uid := regexp.MustCompile(`(?m)^Uid:\s+(\d+)`).FindSubmatch(status)
	var st syscall.Stat_t
	if err := syscall.Stat(fmt.Sprintf("/proc/%d/mem", helper), &st); err != nil {
		t.Fatal(err)
	}
	if uid == nil || string(uid[1]) == "0" || st.Uid != 0 {
		t.Errorf("helper runs as uid %s, its /proc/PID/mem belongs to %d: want a non-root helper whose mem is root's (not dumpable)", uid, st.Uid)
	}
	if out := <-done; !strings.Contains(out, "HTTP/2.0 ok") {
		t.Errorf("the request through the helper failed: %q", out)
	}
}

// No process of the jail holds the real value or the CA's key in its
// memory: not its PID 1, which once had the whole plan, nor the command.
// Only jail's runner and its network helper, outside, do.
func TestCredentialNotInJailMemory(t *testing.T) {
	dir, u := credentialDir(t)
	marker, done := credentialRunWhile(t, dir, u, "memory")
	var jailProcs []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		jailProcs = nil
		proxied := false
		for _, runner := range procsHolding(marker) {
			var walk func(pid int)
			walk = func(pid int) {
				for _, c := range childrenOf(pid) {
					if argv0(c) == "jail-proxy" {
						proxied = true
						continue
					}
					jailProcs = append(jailProcs, c)
					walk(c)
				}
			}
			walk(runner)
		}
		if proxied && len(jailProcs) >= 2 { // PID 1 and the command, once the request went out
			break
		}
	}
	if len(jailProcs) < 2 {
		t.Fatalf("found the jail's processes %v, want its PID 1 and the command", jailProcs)
	}
	// PID 1 is a fork of jail's runner (stagestart.c): besides the plan's
	// secrets, the caller's environment (realValue is a prefix of the
	// host's EXAMPLE_API_KEY) and command line ("--credential ENV@HOST")
	// must be gone from it, and its command line be "jail" alone.
	for _, pid := range jailProcs {
		for _, needle := range []string{realValue, `"ca_key"`, "EXAMPLE_API_KEY@api.test"} {
			if n := memCount(t, pid, needle); n > 0 {
				t.Errorf("process %d (%s) holds %q %d times in its memory", pid, comm(pid), needle, n)
			}
		}
		if comm(pid) != "jail-init" {
			continue
		}
		if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.TrimRight(string(cmdline), "\x00") != "jail" {
			t.Errorf("PID 1 (%d) has the command line %q, want \"jail\"", pid, cmdline)
		}
		if env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); len(bytes.Trim(env, "\x00")) > 0 {
			t.Errorf("PID 1 (%d) has an environment: %q", pid, env)
		}
	}
	<-done
}

// memCount counts needle in the readable memory of pid (root reads any).
func memCount(t *testing.T, pid int, needle string) int {
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return 0 // gone
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	n := 0
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[1][0] != 'r' || strings.HasSuffix(line, "[vvar]") || strings.HasSuffix(line, "[vsyscall]") {
			continue
		}
		var lo, hi uint64
		if _, err := fmt.Sscanf(f[0], "%x-%x", &lo, &hi); err != nil || hi-lo > 1<<30 {
			continue
		}
		b := make([]byte, hi-lo)
		k, _ := mem.ReadAt(b, int64(lo))
		n += bytes.Count(b[:k], []byte(needle))
	}
	return n
}
