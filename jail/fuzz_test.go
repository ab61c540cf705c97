package jail

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/internal/wire"
	"github.com/jail-sandbox/jail/mount"
	"github.com/jail-sandbox/jail/seccomp"
)

// seedConfigs are runs NewPlan plans: the decoders' real input, which the
// fuzzers mutate from.
func seedConfigs() []Config {
	errno := seccomp.Action{Kind: seccomp.Errno, Errno: 1}
	policy := &seccomp.Policy{Name: "fuzz", Default: seccomp.Action{Kind: seccomp.Allow}, Rules: []seccomp.Rule{
		{Names: []string{"unshare"}, Action: errno},
		{Names: []string{"@keyring"}, Action: errno},
		{Names: []string{"socket"}, Action: errno, Conds: []seccomp.Cond{{Index: 0, Op: seccomp.Eq, Value: 40}}},
	}}
	return []Config{
		{Profile: "none", Argv: []string{"true"}, HostUID: 65534, HostGID: 65534, Seccomp: &seccomp.Policy{None: true}},
		{
			Profile: "full", ProfileHash: strings.Repeat("ab", 32), Argv: []string{"true"}, Dir: "/",
			Hostname: "jail", NewSession: true, TTY: TTYAuto, KeyringBestEffort: true, UID: 1000, GID: 1000, HostUID: 65534, HostGID: 65534,
			Env: []string{"PATH=/usr/bin", "HOME=/", "TOKEN=x"}, KeepEnv: []string{"TERM", "PATH", "LANG"},
			SecretKeys: []string{"TOKEN"},
			Mounts: []mount.Spec{
				{Kind: mount.ReadOnlyBind, Src: "/usr", Dst: "/usr"},
				{Kind: mount.Tmpfs, Dst: "/tmp", Size: 1 << 20, Mode: 0o1777},
				{Kind: mount.Bind, Src: scratchDir(), Dst: "/scratch"},
			},
			Rlimits:   []Rlimit{{Resource: 7, Soft: 256, Hard: 512}},
			TimeLimit: 90 * time.Second, Limits: Limits{Memory: 64 << 20, Pids: 64, CPU: 0.5, MaxOutput: 1 << 20, Disk: 4 << 30, DiskReserve: 1 << 20, SessionDisk: 8 << 30, BestEffort: true}, Session: "s1",
			SessionDir: "/var/lib/jail/sessions/s1",
			Network:    Network{Mode: "allowlist", Allow: []AllowEntry{{Host: "example.com", Port: 443}}},
			Seccomp:    policy, AuditLog: "",
		},
		{
			Profile: "host", Argv: []string{"true"}, Dir: "/", HostUID: 65534, HostGID: 65534, UID: 7, GID: 8, TTY: TTYOn,
			Env:     []string{"TERM=dumb", "A=b"},
			Network: Network{Mode: "host"}, Seccomp: policy, SeccompAudit: true,
		},
	}
}

// scratchDir is a writable bind's source for the seeds, the same path on
// every call (plans are compared across calls), owned by an unprivileged
// user as a root caller's writable bind must be.
func scratchDir() string {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("jail-seed-scratch-%d", os.Getuid()))
	os.Mkdir(dir, 0o755)
	if os.Getuid() == 0 {
		os.Chown(dir, 65534, 65534)
	}
	return dir
}

func seedPlans(t testing.TB) [][]byte {
	var plans [][]byte
	for _, cfg := range seedConfigs() {
		plan, err := NewPlan(cfg, PlanOptions{Version: "fuzz"})
		if err != nil {
			t.Fatalf("plan %s: %v", cfg.Profile, err)
		}
		plans = append(plans, plan.Data)
	}
	return plans
}

// wantPlan is what the C decoder must read from cfg's plan: worked out
// again on the Go side from cfg, field by field.
func wantPlan(t *testing.T, cfg Config) runPlanView {
	ids, err := callerIDs(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	mopts := mount.Options{Root: ids.clone}
	if ids.root && !ids.clone {
		mopts.WriteAs = &mount.Owner{UID: ids.uid, GID: ids.gid}
	}
	mounts, err := mount.Prepare(cfg.Mounts, mopts)
	if err != nil {
		t.Fatal(err)
	}
	var mw wire.Writer
	mounts.Encode(&mw)
	disk, err := planDisk(cfg.Limits, cfg.SessionDir, mounts.Writable)
	if err != nil {
		t.Fatal(err)
	}
	place, rlimits, limitsJSON, err := planLimits(cfg, ids, disk)
	if err != nil {
		t.Fatal(err)
	}
	netConfig, err := proxyConfig(cfg, ids)
	if err != nil {
		t.Fatal(err)
	}
	v := runPlanView{
		TimeLimit: cfg.TimeLimit, Root: ids.root, NoAdmin: ids.root && !ids.clone, HostUID: ids.uid, HostGID: ids.gid, UID: cfg.UID, GID: cfg.GID,
		Profile: cfg.Profile, ProfileHash: cfg.ProfileHash, Mounts: mw.Data(),
		ProcFlags: bit(cfg.NewSession, procNewSession) | bit(ids.root, procDropGroups) |
			bit(cfg.Network.Mode == "host", procHostNet) | bit(cfg.Network.Mode == "allowlist", procAllowlist) |
			bit(cfg.KeyringBestEffort, procKeyringBE) | bit(cfg.TTY == TTYOn, procTTYOn) | bit(cfg.TTY == TTYAuto, procTTYAuto),
		Hostname: cfg.Hostname, Dir: cfg.Dir, KeepEnv: cfg.KeepEnv, Env: cfg.Env, Rlimits: rlimits,
		MaxOutput: cfg.Limits.MaxOutput, LimitsJSON: limitsJSON,
		Disk: disk.limit, DiskReserve: disk.reserve, DiskPercent: disk.percent, DiskBinds: disk.flat(),
		SessionDisk: disk.session, SessionDir: disk.sessionDir, Network: networkMode(cfg.Network),
		NetConfig: netConfig, AuditLog: cfg.AuditLog, Session: cfg.Session, Version: "fuzz",
		Secrets: recordSecrets(cfg),
	}
	for _, tr := range mounts.Trees {
		v.Trees = append(v.Trees, treeView{Path: tr.Path, Flags: bit(tr.ReadOnly, treeReadOnly) | bit(tr.IDMap, treeIDMap),
			OwnerUID: tr.UID, OwnerGID: tr.GID})
	}
	v.Cgroup = cgroupView{Memory: cfg.Limits.Memory, Pids: uint32(cfg.Limits.Pids),
		Flags: bit(len(place.Dirs) > 0, 1) | bit(place.Version == cgroup.V2, 2) | bit(place.OwnRelative, 4) |
			bit(!cfg.Limits.PidsRefuse, 8)}
	for _, d := range place.Dirs {
		v.Cgroup.Dirs = append(v.Cgroup.Dirs, d.Path)
	}
	v.SeccompName = "none"
	if !cfg.Seccomp.None {
		policy := cfg.Seccomp
		if len(disk.binds) > 0 {
			policy = withFallocateRefused(policy)
		}
		prog, _, err := seccomp.Cached(policy, seccomp.Mode{Audit: cfg.SeccompAudit, Quiet: cfg.SeccompQuiet}, "")
		if err != nil {
			t.Fatal(err)
		}
		v.SeccompName, v.SeccompBPF = cfg.Seccomp.Name, prog.BPF
		v.SeccompFlags = scLoad | bit(prog.Notify, scNotify) | bit(prog.Audit, scAudit) | bit(cfg.SeccompQuiet, scQuiet)
	}
	return v
}

// TestRunPlanBoundary: what Go plans, C reads back as it was meant, field
// by field.
func TestRunPlanBoundary(t *testing.T) {
	plans := seedPlans(t)
	for i, cfg := range seedConfigs() {
		got, err := runPlanDecode(plans[i])
		if err != nil {
			t.Fatalf("%s: %v", cfg.Profile, err)
		}
		want := wantPlan(t, cfg)
		// The period is the cgroup package's; the quota follows from it.
		want.Cgroup.Period = got.Cgroup.Period
		if cfg.Limits.CPU != 0 {
			want.Cgroup.Quota = uint32(math.Ceil(cfg.Limits.CPU * float64(got.Cgroup.Period)))
		}
		got.SeccompFlags &^= scCompiled // whether this run compiled it, or found it compiled
		if got.Cgroup.Period == 0 {
			t.Errorf("%s: no CPU period", cfg.Profile)
		}
		diffViews(t, cfg.Profile, got, want)
	}
}

// diffViews names each field C read otherwise than Go meant.
func diffViews(t *testing.T, name string, got, want runPlanView) {
	t.Helper()
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := 0; i < g.NumField(); i++ {
		gf, wf := g.Field(i).Interface(), w.Field(i).Interface()
		if b, ok := gf.([]byte); ok && bytes.Equal(b, wf.([]byte)) {
			continue
		}
		if !reflect.DeepEqual(gf, wf) && !(g.Field(i).Kind() == reflect.Slice && g.Field(i).Len() == 0 && w.Field(i).Len() == 0) {
			t.Errorf("%s: C read %s = %.200s, Go meant %.200s", name, g.Type().Field(i).Name, fmt.Sprint(gf), fmt.Sprint(wf))
		}
	}
}

// TestRunPlanRefused: a plan cut anywhere, or with anything after its
// end, is refused, never read as another plan.
func TestRunPlanRefused(t *testing.T) {
	for _, plan := range seedPlans(t) {
		for n := 0; n < len(plan); n++ {
			if _, err := runPlanDecode(plan[:n]); err == nil {
				t.Fatalf("a plan cut at %d of %d bytes decoded", n, len(plan))
			}
		}
		if _, err := runPlanDecode(append(plan[:len(plan):len(plan)], 0)); err == nil {
			t.Fatalf("a plan with a byte after its end decoded")
		}
	}
}

// forwardBody is what the init stage decodes: the runner's frame without
// its length and the 'C' after it, both checked here.
func forwardBody(t testing.TB, plan []byte, argv, env []string, umask uint32) []byte {
	b, err := forwardEncode(plan, argv, env, umask)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 5 || b[len(b)-1] != 'C' || int(binary.LittleEndian.Uint32(b)) != len(b)-5 {
		t.Fatalf("frame of %d bytes: length %d, last byte %q", len(b), binary.LittleEndian.Uint32(b), b[len(b)-1])
	}
	return b[4 : len(b)-1]
}

// TestForwardBoundary: the runner forwards the plan's own bytes and this
// run's tail, and the init stage reads back the same plan, the command,
// the environment made from the caller's and the plan's, and the umask.
func TestForwardBoundary(t *testing.T) {
	argv := []string{"sh", "-c", "echo 'a b'", ""}
	host := []string{"PATH=/host/bin", "TERM=xterm", "SECRET=host", "LANG=C.UTF-8", "TERMX=no"}
	for i, plan := range seedPlans(t) {
		cfg := seedConfigs()[i]
		body := forwardBody(t, plan, argv, host, 0o027)
		f, err := forwardDecode(body)
		if err != nil {
			t.Fatalf("%s: %v", cfg.Profile, err)
		}
		direct, err := runPlanDecode(plan)
		if err != nil {
			t.Fatal(err)
		}
		// The helper's configuration (credential values, the run CA's
		// key) is the runner's alone: the init stage reads it empty.
		if f.Plan.NetConfig != "" {
			t.Errorf("%s: the init stage read the helper's configuration %q", cfg.Profile, f.Plan.NetConfig)
		}
		f.Plan.NetConfig = direct.NetConfig
		diffViews(t, cfg.Profile+" forwarded", f.Plan, direct)
		// The kept host variables the plan does not set, in the plan's
		// order, then the plan's own.
		var env []string
		for _, name := range cfg.KeepEnv {
			for _, kv := range host {
				if strings.HasPrefix(kv, name+"=") && !setsVar(cfg.Env, name) {
					env = append(env, kv)
				}
			}
		}
		env = append(env, cfg.Env...)
		if !reflect.DeepEqual(f.Argv, argv) || !reflect.DeepEqual(f.Envp, env) && len(env)+len(f.Envp) > 0 || f.Umask != 0o027 {
			t.Errorf("%s: init stage read argv %q env %q umask %o; want %q %q 027", cfg.Profile, f.Argv, f.Envp, f.Umask, argv, env)
		}
		for n := 0; n < len(body); n++ {
			if _, err := forwardDecode(body[:n]); err == nil {
				t.Fatalf("%s: a forwarded plan cut at %d of %d bytes decoded", cfg.Profile, n, len(body))
			}
		}
		if _, err := forwardDecode(append(body[:len(body):len(body)], 0)); err == nil {
			t.Fatalf("%s: a forwarded plan with a byte after its end decoded", cfg.Profile)
		}
	}
}

// TestForwardTTY: in tty mode the init stage reads the caller's terminal's
// size, and the caller's TERM in the command's environment in place of
// any the plan keeps or sets; out of it, no size, and TERM only as the
// plan says.
func TestForwardTTY(t *testing.T) {
	host := []string{"PATH=/host/bin", "TERM=xterm-kitty", "LANG=C.UTF-8"}
	for i, plan := range seedPlans(t) {
		cfg := seedConfigs()[i]
		b, err := forwardEncodeTTY(plan, []string{"bash"}, host, 0o22, 50, 211)
		if err != nil {
			t.Fatal(err)
		}
		f, err := forwardDecode(b[4 : len(b)-1])
		if err != nil {
			t.Fatalf("%s: %v", cfg.Profile, err)
		}
		terms := 0
		for _, kv := range f.Envp {
			if strings.HasPrefix(kv, "TERM=") {
				terms++
				if kv != "TERM=xterm-kitty" {
					t.Errorf("%s: tty mode: %s, want the caller's TERM=xterm-kitty", cfg.Profile, kv)
				}
			}
		}
		if !f.TTY || f.Rows != 50 || f.Cols != 211 || terms != 1 {
			t.Errorf("%s: tty mode read tty %v size %dx%d, %d TERM in %q; want true 50x211, 1", cfg.Profile, f.TTY, f.Rows, f.Cols, terms, f.Envp)
		}
		body := forwardBody(t, plan, []string{"bash"}, host, 0o22)
		if f, err = forwardDecode(body); err != nil || f.TTY || f.Rows != 0 || f.Cols != 0 {
			t.Errorf("%s: no tty mode read tty %v size %dx%d (%v)", cfg.Profile, f.TTY, f.Rows, f.Cols, err)
		}
		wantTerm := slices.Contains(cfg.KeepEnv, "TERM") && !setsVar(cfg.Env, "TERM")
		if got := slices.Contains(f.Envp, "TERM=xterm-kitty"); got != wantTerm {
			t.Errorf("%s: no tty mode: the caller's TERM passed %v, want %v (%q)", cfg.Profile, got, wantTerm, f.Envp)
		}
		// The tail's tty word is 0 or 1, and each size a u16.
		for _, at := range []int{20, 16, 12} {
			bad := slices.Clone(body)
			binary.LittleEndian.PutUint32(bad[len(bad)-at:], 0x10000)
			if _, err := forwardDecode(bad); err == nil {
				t.Errorf("%s: a tail with %#x at %d from its end decoded", cfg.Profile, 0x10000, at)
			}
		}
	}
}

func setsVar(env []string, name string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}

// TestForwardGarbled: random flips anywhere in a forwarded plan are
// refused or read, never a crash or a read past the buffer.
func TestForwardGarbled(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for _, plan := range seedPlans(t) {
		body := forwardBody(t, plan, []string{"true"}, nil, 0o22)
		for i := 0; i < 3000; i++ {
			b := append([]byte(nil), body...)
			for k := 0; k < 1+rng.Intn(3); k++ {
				b[rng.Intn(len(b))] ^= byte(1 + rng.Intn(255))
			}
			checkForwarded(t, b)
		}
	}
}

// checkForwarded decodes b as the init stage would; what it accepts is a
// plan it can use.
func checkForwarded(t *testing.T, b []byte) {
	f, err := forwardDecode(b)
	if err == nil && (len(f.Argv) == 0 || len(f.Plan.Trees) > 4096 || len(f.Plan.Rlimits) >= 64) {
		t.Fatalf("accepted argv %q, %d trees, %d rlimits", f.Argv, len(f.Plan.Trees), len(f.Plan.Rlimits))
	}
}

// FuzzRunPlan feeds the runner's plan decoder what a cached plan on disk
// could hold: it must refuse or read it, never crash or read past it.
func FuzzRunPlan(f *testing.F) {
	for _, p := range seedPlans(f) {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := runPlanDecode(b)
		if err == nil && (len(v.Trees) > 4096 || len(v.Rlimits) >= 64) {
			t.Fatalf("decoded %d trees, %d rlimits", len(v.Trees), len(v.Rlimits))
		}
	})
}

// FuzzForward feeds the init stage's decoder what could come on its plan
// pipe: it must refuse or read it, never crash or read past it.
func FuzzForward(f *testing.F) {
	for _, p := range seedPlans(f) {
		f.Add(forwardBody(f, p, []string{"sh", "-c", "true"}, []string{"TERM=dumb", "PATH=/x"}, 0o22))
	}
	f.Fuzz(checkForwarded)
}

// FuzzStatusString: whatever bytes an argv, a path or a name holds, the
// runner's JSON string is valid JSON and says the same, each byte that is
// not well-formed UTF-8 as U+FFFD.
func FuzzStatusString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "\x00x", "tab\t\n\x1f\x7f", "é€😀", "\xc3\x28", "\xed\xa0\x80",
		"\xf4\x90\x80\x80", "\xc0\xaf", "\xe0\x80\xaf", "a\xffb", "\xf0\x9f\x98"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := jsonString(s)
		var back string
		if err := json.Unmarshal([]byte(out), &back); err != nil {
			t.Fatalf("json_str(%q) = %s: not JSON: %v", s, out, err)
		}
		if want := cString(s); back != want {
			t.Fatalf("json_str(%q) reads back as %q, want %q", s, back, want)
		}
	})
}

// cString is what json_str should say for s: C sees up to the first NUL;
// well-formed UTF-8 passes, every other byte becomes U+FFFD.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		b.WriteRune(r) // RuneError for an invalid byte: U+FFFD
		s = s[n:]
	}
	return b.String()
}

// TestProxyReport: the runner splices the proxy's last whole report into
// the record, says what else the proxy wrote, and never keeps a report
// that was cut (its end missing: the proxy died writing it) or too long:
// it marks the record instead.
func TestProxyReport(t *testing.T) {
	whole := `"network_denied":[],"network_allowed":[{"host":"a.test","port":443,"connections":1,"bytes_in":1,"bytes_out":2}]`
	for _, tc := range []struct {
		name, in, last, note string
		incomplete           bool
	}{
		{"whole reports, the last kept", whole + "\n" + whole + "\n", whole, "", false},
		{"a message", "jail: allowlist proxy: configuration: bad\n", "", "jail: allowlist proxy: configuration: bad", false},
		{"a report cut by other output", whole + "\n" + `"network_denied":[{"host":"x` + "fatal error\n", whole, "", true},
		{"a report cut by its end", whole + "\n" + `"network_denied":[{"ho`, whole, "", true},
		{"a report too long", `"network_denied":[` + strings.Repeat("x", 300<<10) + "]\n", "", "", true},
	} {
		got, err := proxyLines(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got.Last != tc.last || got.Note != tc.note || got.Incomplete != tc.incomplete {
			t.Errorf("%s: kept %.60q, said %q, incomplete %v; want %.60q, %q, %v", tc.name, got.Last, got.Note, got.Incomplete, tc.last, tc.note, tc.incomplete)
		}
	}
}

// TestProxyRefusals: the runner keeps the first few refusal lines for the
// end of the run and counts the rest, never a byte a terminal would act on
// (the proxy talks to the jail, and the lines go to the caller's stderr).
func TestProxyRefusals(t *testing.T) {
	var in strings.Builder
	for i := range 8 {
		fmt.Fprintf(&in, "refused network: refused h%d.test:80 (not on the allowlist)\n", i)
	}
	got, err := proxyLines("refused network: refused \x1b]0;pwned\x07x.test:80 (\x9bwhy)\n" + in.String() +
		"jail: allowlist proxy: \x1b[2Jfailed\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"network: refused ?]0;pwned?x.test:80 (?why)"}
	for i := range 4 {
		want = append(want, fmt.Sprintf("network: refused h%d.test:80 (not on the allowlist)", i))
	}
	if !slices.Equal(got.Refused, want) || got.Refusals != 9 {
		t.Errorf("kept %q of %d; want %q of 9", got.Refused, got.Refusals, want)
	}
	if got.Note != "jail: allowlist proxy: ?[2Jfailed" {
		t.Errorf("said %q", got.Note)
	}
	long, err := proxyLines("refused " + strings.Repeat("y", 5000) + "\n")
	if err != nil || len(long.Refused) != 1 || len(long.Refused[0]) != proxyRefusedLen-1 {
		t.Errorf("a long refusal: %v, kept %d bytes; want %d", err, len(long.Refused[0]), proxyRefusedLen-1)
	}
}
