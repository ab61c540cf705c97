package testscripts

// The status record's golden test: real jails (the built binary) that end
// every way, each record decoded strictly into jail.Status, so the writers
// (the runner's C, the proxy's report, Go's own record) and the Go type
// cannot drift: a field the type does not know fails the decode, a field of
// the type no jail writes fails the coverage check at the end.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/jail"
)

// ending is one way a run ends, and what its record must say.
type ending struct {
	name   string
	flags  []string // jail's, before --
	argv   []string
	code   int              // jail's exit status; -1: any
	goSide bool             // Go writes the record: jail failed before the runner
	skip   func() string    // why this host cannot show it; "" when it can
	as     *user.User       // the caller, when not this test
	env    []string         // jail's environment beyond PATH, HOME and TMPDIR
	stdout func(io.Reader)  // reads the command's stdout; nil: kept
	check  func(c *checker) // what the record must say
}

// exemptPaths are fields of the type no ending here provokes, and why.
var exemptPaths = map[string]string{
	"network_proxy_failed":      "only a proxy that cannot serve writes it",
	"network_report_incomplete": "only a cut proxy report writes it (jail's TestProxyReport covers that)",
	"session_keyring_inherited": "only a jail under a filter outside jail that refuses keyctl writes it (isolation/keyring_refused.txtar)",
}

// runnerAlways are the omitempty fields every record of the runner has
// (absent only from the one Go writes), as Status's comment says.
var runnerAlways = []string{"userns", "limits", "network", "jail_cpu_ms", "seccomp", "seccomp_audit", "seccomp_compiled", "denied"}

func TestStatusRecord(t *testing.T) {
	dir := goldenDir(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	// An HTTPS server (its certificate, for example.com, is its own CA),
	// for a run with a credential bound to it.
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") }))
	tlsSrv.EnableHTTP2 = true
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	_, tlsPort, _ := net.SplitHostPort(tlsSrv.Listener.Addr().String())
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(dir, "upstream-ca.pem"), ca, 0o644); err != nil {
		t.Fatal(err)
	}
	cred := "extends = \"default\"\n[network]\nmode = \"allowlist\"\nupstream_ca = \"" + filepath.Join(dir, "upstream-ca.pem") + "\"\n" +
		"[[credential]]\nenv = \"GOLDEN_KEY\"\nhosts = [\"example.com\"]\nheader = \"x-key\"\n"
	if err := os.WriteFile(filepath.Join(dir, "cred.toml"), []byte(cred), 0o644); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var skipped []string
	for _, e := range endings(dir, port, tlsPort) {
		t.Run(e.name, func(t *testing.T) {
			if e.skip != nil {
				if why := e.skip(); why != "" {
					skipped = append(skipped, e.name)
					t.Skip(why)
				}
			}
			code, rec, stderr := runJail(t, dir, e)
			if e.code >= 0 && code != e.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, e.code, stderr)
			}
			c := decodeRecord(t, rec)
			jsonPaths(seen, "", c.generic)
			c.common(e.goSide)
			if e.check != nil {
				e.check(c)
			}
		})
	}
	t.Run("audit log", func(t *testing.T) { auditRecord(t, dir) })
	var missing []string
	for _, p := range typePaths(reflect.TypeOf(jail.Status{}), "") {
		if !seen[p] && exemptPaths[p] == "" {
			missing = append(missing, p)
		}
	}
	switch {
	case len(missing) > 0 && len(skipped) > 0:
		t.Logf("fields no record here had (endings skipped: %v): %v", skipped, missing)
	case len(missing) > 0:
		t.Errorf("jail.Status has fields no jail wrote: %v (a writer dropped or renamed them, or they need an ending here)", missing)
	}
}

// goldenDir is where the runs start, with the files they use; the
// unprivileged user may enter it.
func goldenDir(t *testing.T) string {
	dir, err := os.MkdirTemp(s.workRoot, "status-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	files := map[string]string{
		"refuse.toml":   "extends = \"default\"\n[limits]\non_pids_limit = \"refuse\"\n",
		"cputime.toml":  "extends = \"default\"\n[limits]\ncpu_time = \"1s\"\n",
		"fsize.toml":    "extends = \"default\"\n[limits]\nfsize = \"1M\"\n",
		"sessdisk.toml": "extends = \"agent\"\n[limits]\nsession_disk = \"1G\"\n",
		"nodeleg.toml":  "extends = \"default\"\n[limits]\ncgroup_parent = \"/jail-not-delegated\"\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "secrets.env"), []byte("GOLDEN_KEY=golden-value\nOTHER=two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runJail runs the ending's jail from dir, its record on fd 3; it returns
// jail's exit status, the record's bytes and jail's stderr.
func runJail(t *testing.T, dir string, e ending, extra ...string) (int, []byte, string) {
	args := append(append(append(append([]string{}, e.flags...), extra...), "--status-json", "fd:3", "--"), e.argv...)
	cmd := exec.Command(filepath.Join(s.binDir, "jail"), args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/nonexistent", "TMPDIR=/tmp"}, e.env...)
	if e.as != nil {
		uid, _ := strconv.Atoi(e.as.Uid)
		gid, _ := strconv.Atoi(e.as.Gid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
		cmd.Env = append(cmd.Env, "USER="+e.as.Username)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	recR, recW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer recR.Close()
	cmd.ExtraFiles = []*os.File{recW}
	var out io.ReadCloser
	if e.stdout != nil {
		if out, err = cmd.StdoutPipe(); err != nil {
			t.Fatal(err)
		}
	} else {
		cmd.Stdout = io.Discard
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	recW.Close()
	rec := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(recR)
		rec <- b
	}()
	if out != nil {
		e.stdout(out)
		out.Close() // the caller's end goes away
	}
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run jail: %v", err)
	}
	return code, <-rec, stderr.String()
}

// checker holds one record, decoded strictly and as plain JSON, for the
// checks of its ending.
type checker struct {
	t       *testing.T
	raw     []byte
	st      *jail.Status
	generic map[string]any
}

// decodeRecord decodes one record: one line, a JSON object with no field
// jail.Status does not know, nothing after it.
func decodeRecord(t *testing.T, raw []byte) *checker {
	t.Helper()
	if len(raw) == 0 || raw[len(raw)-1] != '\n' || bytes.Count(raw, []byte("\n")) != 1 {
		t.Fatalf("the record is not one line: %q", raw)
	}
	c := &checker{t: t, raw: raw, st: &jail.Status{}}
	if err := strictDecode(raw, c.st); err != nil {
		t.Fatalf("decode the record strictly into jail.Status: %v\nrecord: %s", err, raw)
	}
	if err := json.Unmarshal(raw, &c.generic); err != nil {
		t.Fatal(err)
	}
	return c
}

// strictDecode decodes b whole into v, refusing fields v does not know.
func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if rest, _ := io.ReadAll(dec.Buffered()); len(bytes.TrimSpace(rest)) > 0 {
		return fmt.Errorf("more after the record: %q", rest)
	}
	return nil
}

func (c *checker) want(ok bool, what string) {
	c.t.Helper()
	if !ok {
		c.t.Errorf("want %s\nrecord: %s", what, c.raw)
	}
}

func (c *checker) has(keys ...string) {
	c.t.Helper()
	for _, k := range keys {
		if _, ok := c.generic[k]; !ok {
			c.t.Errorf("no %q in the record\nrecord: %s", k, c.raw)
		}
	}
}

func (c *checker) lacks(keys ...string) {
	c.t.Helper()
	for _, k := range keys {
		if _, ok := c.generic[k]; ok {
			c.t.Errorf("%q in the record, want none\nrecord: %s", k, c.raw)
		}
	}
}

// verdict reports whether any verdict is set.
func (c *checker) verdict() bool {
	st := c.st
	return st.TimedOut || st.OOMKilled || st.PidsLimitHit || st.CPUTimeExceeded || st.FileTooLarge || st.OutputTruncated ||
		st.DiskLimitHit || st.DiskReserveHit
}

var hexHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

// common checks what every record says, as Status's comments promise: the
// fields each writer always writes, and the ones that go together.
func (c *checker) common(goSide bool) {
	c.t.Helper()
	st := c.st
	every := everyRecord()
	c.has(every...)
	c.want(st.Version == 1, "version 1")
	if goSide {
		for k := range c.generic {
			if !slices.Contains(every, k) && k != "error" {
				c.t.Errorf("%q in the record Go writes, which has only the fields every record has\nrecord: %s", k, c.raw)
			}
		}
		c.want(st.ExitCode == 125 && st.Error != "", "exit 125 with an error")
		return
	}
	c.has(runnerAlways...)
	if st.Limits == nil {
		c.t.Fatalf("no limits in the runner's record\nrecord: %s", c.raw)
	}
	c.want(hexHash.MatchString(st.ProfileHash), "a profile_hash")
	if u := st.UserNS; u != nil {
		c.want((u.Path == "root" || u.Path == "unprivileged") && u.HostUID != 0 && u.HostGID != 0 && u.Why != "",
			"userns: a path, non-root host ids, why")
	}
	c.want(st.SetupMS > 0 && st.WallMS >= st.SetupMS && st.JailCPUMS >= 0, "setup_ms > 0, wall_ms >= setup_ms")
	if st.Signal != 0 {
		c.want(st.ExitCode == 128+st.Signal && strings.HasPrefix(st.SignalName, "SIG"), "exit 128+signal, and its name")
	}
	l := st.Limits
	c.want(l != nil && slices.Contains([]string{"v1", "v2", "none"}, l.Cgroup) && l.Enforced != nil && l.NotEnforced != nil,
		"limits: a cgroup version or none, enforced and not_enforced lists")
	if l != nil && l.Cgroup != "none" {
		c.has("oom_kills", "memory_peak_bytes", "pids_peak", "cpu_throttled_periods")
	}
	if l != nil && l.MaxOutput != 0 {
		c.has("output_dropped", "output_closed")
		d := st.OutputDropped
		c.want(d != nil && st.OutputTruncated == (d.Stdout+d.Stderr > 0), "output_truncated when output_dropped says so")
	} else {
		c.lacks("output_dropped", "output_closed")
		c.want(!st.OutputTruncated, "no output_truncated without a cap")
	}
	c.want(slices.Contains([]string{"none", "allowlist", "host"}, st.Network), "network none, allowlist or host")
	// The network helper reports in every mode but host (the resolver
	// refuses lookups in none); Go's own record has no helper.
	if st.Network != "host" && !goSide {
		c.has("network_denied", "network_allowed")
	} else {
		c.lacks("network_denied", "network_allowed")
	}
	for _, d := range st.Denied {
		c.want(d.Syscall != "" && d.Count >= 1 && len(d.Args) == 6 && strings.HasPrefix(d.Args[0], "0x"), "denied: a name, a count, six hex arguments")
	}
	for _, v := range st.Secrets {
		c.want(v == "***", "secrets' values ***")
	}
}

// everyRecord are the fields without omitempty: in every record.
func everyRecord() []string {
	var keys []string
	t := reflect.TypeOf(jail.Status{})
	for i := 0; i < t.NumField(); i++ {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if !strings.Contains(opts, "omitempty") {
			keys = append(keys, name)
		}
	}
	return keys
}

// typePaths are the JSON paths of t's fields: "limits.why_not",
// "denied[].args".
func typePaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		p := prefix + name
		out = append(out, p)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct:
			out = append(out, typePaths(ft, p+".")...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, typePaths(ft.Elem(), p+"[].")...)
		}
	}
	return out
}

// jsonPaths adds the paths of v's fields to seen, as typePaths names them.
func jsonPaths(seen map[string]bool, prefix string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			seen[prefix+k] = true
			jsonPaths(seen, prefix+k+".", x)
		}
	case []any:
		for _, x := range v {
			jsonPaths(seen, strings.TrimSuffix(prefix, ".")+"[].", x)
		}
	}
}

// auditRecord checks the audit log's line: decoded strictly into
// audit.Record, its own fields, then the status record's very bytes.
func auditRecord(t *testing.T, dir string) {
	log := filepath.Join(dir, "audit.jsonl")
	e := ending{flags: []string{"-p", "default"}, argv: []string{"sh", "-c", "unshare -U true; exit 4"}}
	start := time.Now()
	code, rec, stderr := runJail(t, dir, e, "--audit-log", log)
	if code != 4 {
		t.Fatalf("exit %d, want 4; stderr: %s", code, stderr)
	}
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var lines [][]byte
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	if len(lines) != 1 {
		t.Fatalf("%d lines in the audit log, want 1", len(lines))
	}
	line := lines[0]
	var r audit.Record
	if err := strictDecode(line, &r); err != nil {
		t.Fatalf("decode the audit line strictly into audit.Record: %v\nline: %s", err, line)
	}
	if !bytes.HasSuffix(append(line, '\n'), rec[1:]) {
		t.Errorf("the audit line does not end with the status record's fields\nline:   %s\nrecord: %s", line, rec)
	}
	ok := r.Time.After(start.Add(-time.Second)) && r.Time.Before(time.Now().Add(time.Second)) &&
		regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(r.RunID) && r.Session == "" &&
		slices.Equal(r.Argv, e.argv) && r.Cwd == dir && r.CallerUID == uint32(os.Getuid()) && r.JailVersion != "" &&
		r.ExitCode == 4 && len(r.Denied) == 1 && r.Denied[0].Syscall == "unshare"
	if !ok {
		t.Errorf("the audit line's fields: %+v\nline: %s", r, line)
	}
}
