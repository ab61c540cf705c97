package jail

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"jail/mount"
	"jail/seccomp"
)

// seedPlans are run plans NewPlan makes: the decoder's real input, which
// the fuzzer mutates from.
func seedPlans(t testing.TB) [][]byte {
	errno := seccomp.Action{Kind: seccomp.Errno, Errno: 1}
	policy := &seccomp.Policy{Name: "fuzz", Default: seccomp.Action{Kind: seccomp.Allow}, Rules: []seccomp.Rule{
		{Names: []string{"unshare"}, Action: errno},
		{Names: []string{"socket"}, Action: errno, Conds: []seccomp.Cond{{Index: 0, Op: seccomp.Eq, Value: 40}}},
	}}
	configs := []Config{
		{Profile: "none", Argv: []string{"true"}, HostUID: 65534, HostGID: 65534, Seccomp: &seccomp.Policy{None: true}},
		{
			Profile: "full", ProfileHash: strings.Repeat("ab", 32), Argv: []string{"true"}, Dir: "/",
			Hostname: "jail", NewSession: true, UID: 1000, GID: 1000, HostUID: 65534, HostGID: 65534,
			Env: []string{"PATH=/usr/bin", "HOME=/"}, KeepEnv: []string{"TERM"},
			Mounts: []mount.Spec{
				{Kind: mount.ReadOnlyBind, Src: "/usr", Dst: "/usr"},
				{Kind: mount.Tmpfs, Dst: "/tmp", Size: 1 << 20, Mode: 0o1777},
			},
			TimeLimit: 90 * time.Second, Limits: Limits{Memory: 64 << 20, Pids: 64, CPU: 0.5, MaxOutput: 1 << 20, BestEffort: true}, Session: "s1",
			Network: Network{Mode: "allowlist", Allow: []AllowEntry{{Host: "example.com", Port: 443}}},
			Seccomp: policy,
		},
	}
	var plans [][]byte
	for _, cfg := range configs {
		plan, err := NewPlan(cfg, PlanOptions{Version: "fuzz"})
		if err != nil {
			t.Fatalf("plan %s: %v", cfg.Profile, err)
		}
		plans = append(plans, plan.Data)
	}
	return plans
}

// TestRunPlanBoundary: what Go plans, C reads back as it was meant.
func TestRunPlanBoundary(t *testing.T) {
	plans := seedPlans(t)
	v, err := runPlanDecode(plans[1])
	if err != nil {
		t.Fatal(err)
	}
	if v.Profile != "full" || v.ProfileHash != strings.Repeat("ab", 32) || v.TimeLimit != 90*time.Second ||
		v.MaxOutput != 1<<20 || v.Network != "allowlist" || v.Session != "s1" || v.Version != "fuzz" ||
		v.SeccompName != "fuzz" || v.SeccompLen == 0 || v.UID != 1000 || v.GID != 1000 {
		t.Errorf("C read back %+v", v)
	}
	// Every prefix of a plan is malformed, never read as another plan.
	for n := 0; n < len(plans[1]); n += 7 {
		if _, err := runPlanDecode(plans[1][:n]); err == nil {
			t.Fatalf("a plan cut at %d of %d bytes decoded", n, len(plans[1]))
		}
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
		if err == nil && v.Trees > 4096 {
			t.Fatalf("decoded %d trees", v.Trees)
		}
	})
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
		last, note, incomplete, err := proxyLines(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if last != tc.last || note != tc.note || incomplete != tc.incomplete {
			t.Errorf("%s: kept %.60q, said %q, incomplete %v; want %.60q, %q, %v", tc.name, last, note, incomplete, tc.last, tc.note, tc.incomplete)
		}
	}
}
