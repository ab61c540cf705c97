package profiles

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testfiles"
	"github.com/jail-sandbox/jail/internal/tomlstrict"
	"github.com/jail-sandbox/jail/seccomp"
	"github.com/jail-sandbox/jail/seccomp/policyfile"
)

func mustPolicy(t testing.TB, name string, opts Options) *seccomp.Policy {
	t.Helper()
	p, err := policyfile.Load(name, opts)
	if err != nil {
		t.Fatalf("policyfile.Load(%q): %v", name, err)
	}
	return p
}

// searchDir makes a profile search directory holding profiles (NAME.toml)
// and policies (seccomp/NAME.toml), given as path → content.
func searchDir(t *testing.T, files map[string]string) (string, Options) {
	t.Helper()
	dir := testfiles.Write(t, files)
	return dir, Options{SearchPath: []string{dir}}
}

var (
	ePerm  = seccomp.Action{Kind: seccomp.Errno, Errno: 1}
	eNoSys = seccomp.Action{Kind: seccomp.Errno, Errno: 38}
	allow  = seccomp.Action{Kind: seccomp.Allow}
)

// TestBuiltinPolicies checks that the built-in profiles name the default
// policy (the container profile, the outer jail of nested ones, its own).
func TestBuiltinPolicies(t *testing.T) {
	for _, name := range builtinNames {
		p := mustLoad(t, name, Options{})
		want := policyfile.Default
		if name == "container" {
			want = "container"
		}
		if p.Seccomp.Policy != want || p.Seccomp.resolved == nil || p.Seccomp.Audit || p.Seccomp.Quiet != (name == "container") {
			t.Errorf("profile %s: seccomp %+v", name, p.Seccomp)
		}
	}
}

func TestSeccompProfiles(t *testing.T) {
	dir, opts := searchDir(t, map[string]string{
		"seccomp/deny.toml": "description = \"d\"\ndefault = { errno = \"EPERM\" }\n[[rule]]\nsyscalls = [\"read\", \"sendmsg\", \"chdir\", \"execve\", \"exit\", \"exit_group\"]\naction = \"allow\"\n",
		"named.toml":        "[seccomp]\npolicy = \"deny\"\naudit = true\n",
		"child-audit.toml":  "extends = \"named\"\n[seccomp]\naudit = false\n",
		"child-none.toml":   "extends = \"named\"\nseccomp = { policy = \"none\" }\n",
		"inline.toml": `extends = "named"
[seccomp]
extends = "deny"
[[seccomp.rule]]
syscalls = ["write"]
action = "allow"
comment = "and write"
`,
		"inline-own.toml":      "[seccomp]\ndefault = \"kill_process\"\nrule = [{ syscalls = [\"sendmsg\", \"read\", \"chdir\", \"execve\", \"exit\", \"exit_group\"], action = \"allow\" }]\n",
		"child-of-inline.toml": "extends = \"inline\"\n[seccomp]\npolicy = \"deny\"\n",
		"bare.toml":            "hostname = \"x\"\n",
	})
	deny := mustPolicy(t, "deny", opts)
	for _, tc := range []struct {
		name    string
		want    Seccomp
		running *seccomp.Policy // what Config gives the jail
	}{
		{"named", Seccomp{Policy: "deny", Audit: true, resolved: deny}, deny},
		// audit merges like a scalar; the policy is inherited.
		{"child-audit", Seccomp{Policy: "deny", resolved: deny}, deny},
		// A child's policy replaces the parent's, audit stays.
		{"child-none", Seccomp{Policy: "none", Audit: true, resolved: &seccomp.Policy{Name: "none", None: true}}, &seccomp.Policy{Name: "none", None: true}},
		{"inline", Seccomp{Audit: true, Inline: &seccomp.Policy{
			Name: "inline", Default: ePerm, Rules: append(slices.Clone(deny.Rules),
				seccomp.Rule{Names: []string{"write"}, Action: allow, Comment: "and write"}),
		}}, nil},
		{"inline-own", Seccomp{Inline: &seccomp.Policy{Name: "inline", Default: seccomp.Action{Kind: seccomp.KillProcess},
			Rules: []seccomp.Rule{{Names: seccomp.Needed, Action: allow}}}}, nil},
		{"child-of-inline", Seccomp{Policy: "deny", Audit: true, resolved: deny}, deny},
		// Nothing said anywhere: the default policy.
		{"bare", Seccomp{Policy: "default", resolved: mustPolicy(t, "default", Options{})}, mustPolicy(t, "default", Options{})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustLoad(t, tc.name, opts)
			if !reflect.DeepEqual(p.Seccomp, tc.want) {
				t.Errorf("seccomp:\n%+v\nwant:\n%+v", p.Seccomp, tc.want)
			}
			c := mustConfig(t, p, []string{"true"}, nil)
			running := tc.running
			if running == nil {
				running = tc.want.Inline
			}
			if !reflect.DeepEqual(c.Seccomp, running) || c.SeccompAudit != tc.want.Audit {
				t.Errorf("Config: %+v audit %v", c.Seccomp, c.SeccompAudit)
			}
			roundTrip(t, p)
		})
	}
	// The policy file joins the profile's dependencies.
	p, err := Load("named", opts)
	if err != nil {
		t.Fatal(err)
	}
	if fi := p.Files[filepath.Join(dir, "seccomp/deny.toml")]; fi == nil || !fi.Mode().IsRegular() {
		t.Errorf("the policy file is not among the profile's files: %v", p.Files)
	}
}

// TestSeccompFiles checks that a policy looked up by name records where it
// was looked for and found, as profiles do, so a cached plan notices a
// policy file appearing, changing or going.
func TestSeccompFiles(t *testing.T) {
	first := testfiles.Write(t, map[string]string{})
	second := testfiles.Write(t, map[string]string{
		"team.toml":            "[seccomp]\npolicy = \"teampol\"\n",
		"seccomp/teampol.toml": "extends = \"basepol\"\n",
		"seccomp/basepol.toml": "default = \"allow\"\n",
	})
	p, err := Load("team", Options{SearchPath: []string{first, second}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		filepath.Join(first, "team.toml"):             false,
		filepath.Join(second, "team.toml"):            true,
		filepath.Join(first, "seccomp/teampol.toml"):  false,
		filepath.Join(second, "seccomp/teampol.toml"): true,
		filepath.Join(first, "seccomp/basepol.toml"):  false,
		filepath.Join(second, "seccomp/basepol.toml"): true,
	}
	for path, exists := range want {
		fi, ok := p.Files[path]
		if !ok || (fi != nil) != exists {
			t.Errorf("%s: recorded %v, present %v; want present %v", path, ok, fi, exists)
		}
	}
	if len(p.Files) != len(want) {
		t.Errorf("Files = %v", p.Files)
	}
}

func TestPolicyOwnership(t *testing.T) {
	dir, opts := searchDir(t, map[string]string{
		"seccomp/open.toml": "default = \"allow\"\n",
		"uses-open.toml":    "[seccomp]\npolicy = \"open\"\n",
		"oci-open.toml":     "[seccomp]\noci = \"open.json\"\n",
		"open.json":         "{}",
	})
	for _, f := range []string{"seccomp/open.toml", "open.json"} {
		if err := os.Chmod(filepath.Join(dir, f), 0o664); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Load("uses-open", opts); err == nil || !strings.Contains(err.Error(), "uses-open.toml:2:1: seccomp.policy: seccomp policy ") {
		t.Errorf("Load(uses-open) = %v", err)
	}
	if _, err := Load("oci-open", opts); err == nil || !strings.Contains(err.Error(), "oci-open.toml:2:1: seccomp.oci: OCI seccomp profile "+filepath.Join(dir, "open.json")+" is writable by group or others") {
		t.Errorf("Load(oci-open) = %v", err)
	}
}

// TestSeccompOCI checks how an imported file is found, read, recorded and
// shown; what the import makes of it is the seccomp package's.
func TestSeccompOCI(t *testing.T) {
	dir0, opts0 := searchDir(t, map[string]string{
		"team.toml": "[seccomp]\noci = \"oci/team.json\"\naudit = true\n",
		"oci/team.json": `{"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 38, "syscalls": [
			{"names": ["read", "write", "no_such_call", "sendmsg", "chdir", "execve", "exit", "exit_group"], "action": "SCMP_ACT_ALLOW"}]}`,
	})
	json := filepath.Join(dir0, "oci/team.json")
	p, err := Load("team", opts0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Seccomp.OCI != json || p.Seccomp.Policy != "" || p.Seccomp.Inline != nil || !p.Seccomp.Audit ||
		len(p.Seccomp.Warnings) != 1 || !strings.Contains(p.Seccomp.Warnings[0], "no_such_call") {
		t.Errorf("seccomp = %+v", p.Seccomp)
	}
	if _, ok := p.Files[json]; !ok {
		t.Errorf("the OCI file is not among the profile's files: %v", p.Files)
	}
	c := mustConfig(t, p, []string{"true"}, nil)
	if c.Seccomp.Name != "oci:"+json || c.Seccomp.Default != eNoSys || len(c.Seccomp.Rules) != 1 ||
		!slices.Equal(c.Seccomp.Rules[0].Names, []string{"read", "write", "sendmsg", "chdir", "execve", "exit", "exit_group"}) || !c.SeccompAudit {
		t.Errorf("Config.Seccomp = %+v", c.Seccomp)
	}
	data, _ := p.Encode()
	if !strings.Contains(string(data), "# import warning: ") || !strings.Contains(string(data), "oci = "+tomlstrict.Quote(json)+"\naudit = true\n") {
		t.Errorf("Encode:\n%s", data)
	}
	roundTrip(t, p)
	if docker := "../seccomp/testdata/docker-default.json"; fileExists(docker) {
		abs, _ := filepath.Abs(docker)
		_, opts := searchDir(t, map[string]string{"docker.toml": "[seccomp]\noci = " + tomlstrict.Quote(abs) + "\n"})
		if c := mustConfig(t, mustLoad(t, "docker", opts), []string{"true"}, nil); c.Seccomp.Name != "oci:"+abs || len(c.Seccomp.Rules) == 0 {
			t.Errorf("Docker's default profile: %+v", c.Seccomp)
		}
	}

	dir, opts := searchDir(t, map[string]string{
		"sub/rel.toml": "[seccomp]\noci = \"../docker.json\"\n",
		"abs.toml":     "[seccomp]\noci = \"/nonexistent/docker.json\"\n",
		"docker.json":  "not json",
	})
	var probs Errors
	_, err = Load(filepath.Join(dir, "sub/rel.toml"), opts)
	if !errors.As(err, &probs) || len(probs) != 1 || probs[0].Key != "seccomp.oci" || probs[0].Line != 2 ||
		!strings.Contains(probs[0].Msg, filepath.Join(dir, "docker.json")+": ") {
		t.Errorf("Load(rel) = %v; want a problem naming the file it read", err)
	}
	if _, err := Load("abs", opts); err == nil || !strings.Contains(err.Error(), "seccomp.oci: open /nonexistent/docker.json: no such file or directory") {
		t.Errorf("Load(abs) = %v", err)
	}
	// A profile held in memory must have read its file.
	p = mustLoad(t, "minimal", Options{})
	p.Seccomp = Seccomp{OCI: "/x.json"}
	if _, err := p.Config([]string{"true"}, nil); err == nil || !strings.Contains(err.Error(), `seccomp.oci: "/x.json" was not imported`) {
		t.Errorf("Config(unimported oci) = %v", err)
	}
}

// TestSeccompCheck checks that Config refuses a profile whose seccomp
// settings code has made inconsistent, rather than run without the filter
// the profile names (invariant 4, fail closed).
func TestSeccompCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(s *Seccomp)
		want   string
	}{
		{"no policy", func(s *Seccomp) { *s = Seccomp{} }, "seccomp: give exactly one of policy, oci or an inline policy"},
		{"two", func(s *Seccomp) { s.OCI = "/x" }, "seccomp: give exactly one"},
		{"renamed", func(s *Seccomp) { s.Policy = "strict" }, `seccomp.policy: "strict" was not read`},
		{"none unread", func(s *Seccomp) { s.Policy = "none" }, `seccomp.policy: "none" was not read`},
		{"bad name", func(s *Seccomp) { s.Policy = "../x" }, `seccomp.policy: "../x": not a policy name`},
		{"bad inline", func(s *Seccomp) {
			*s = Seccomp{Inline: &seccomp.Policy{Name: "inline", Default: allow, Rules: []seccomp.Rule{{Action: allow}}}}
		}, "seccomp.rule[1].syscalls: no syscall named"},
		{"inline misnamed", func(s *Seccomp) { *s = Seccomp{Inline: &seccomp.Policy{Name: "x", Default: allow}} }, `seccomp: an inline policy is named "inline"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustLoad(t, "minimal", Options{})
			tc.change(&p.Seccomp)
			if _, err := p.Config([]string{"true"}, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Config = %v; want %q", err, tc.want)
			}
		})
	}
	// Config's policy is a copy: changing it changes neither the profile
	// nor the next run's.
	p := mustLoad(t, "minimal", Options{})
	c := mustConfig(t, p, []string{"true"}, nil)
	if c.Seccomp == nil || c.Seccomp.Name != "default" || c.Seccomp.None {
		t.Fatalf("Config.Seccomp = %+v", c.Seccomp)
	}
	c.Seccomp.Default = seccomp.Action{Kind: seccomp.Log}
	if len(c.Seccomp.Rules) > 0 {
		c.Seccomp.Rules[0].Names[0] = "changed"
	}
	if again := mustConfig(t, p, []string{"true"}, nil); !reflect.DeepEqual(again.Seccomp, mustPolicy(t, "default", Options{})) {
		t.Error("changing one Config's policy changed the profile's")
	}
}

func TestSeccompApply(t *testing.T) {
	dir, opts := searchDir(t, map[string]string{
		"seccomp/mine.toml": "default = \"log\"\n",
		"seccomp/bad.toml":  "default = \"log\"\nrule = 1\n",
		"p.toml":            "extends = \"default\"\n[seccomp]\npolicy = \"default\"\naudit = true\n",
	})
	p := mustLoad(t, "p", opts)
	p.Files = map[string]os.FileInfo{}
	if err := p.Apply(Overrides{Seccomp: "mine"}); err != nil {
		t.Fatal(err)
	}
	if p.Seccomp.Policy != "mine" || p.Seccomp.resolved.Default.Kind != seccomp.Log || !p.Seccomp.Audit {
		t.Errorf("--seccomp mine: %+v", p.Seccomp)
	}
	if _, ok := p.Files[filepath.Join(dir, "seccomp/mine.toml")]; !ok {
		t.Errorf("the flag's policy file is not among the profile's files: %v", p.Files)
	}
	roundTrip(t, p)
	if err := p.Apply(Overrides{Seccomp: "none"}); err != nil {
		t.Fatal(err)
	}
	if c := mustConfig(t, p, []string{"true"}, nil); !c.Seccomp.None || c.Seccomp.Name != "none" {
		t.Errorf("--seccomp none: %+v", c.Seccomp)
	}

	q := mustLoad(t, "minimal", opts)
	if err := q.Apply(Overrides{SeccompAudit: true}); err != nil || !q.Seccomp.Audit || q.Seccomp.Policy != "default" {
		t.Errorf("--seccomp-audit: %v %+v", err, q.Seccomp)
	}
	before := mustLoad(t, "minimal", opts)
	for _, tc := range []struct{ name, want string }{
		{"nosuch", `--seccomp "nosuch": no seccomp policy "nosuch" in ` + filepath.Join(dir, "seccomp")},
		{"a/b", `--seccomp "a/b": not a policy name`},
		{"bad", `--seccomp "bad": ` + filepath.Join(dir, "seccomp/bad.toml") + ":2:1: rule: want an array of tables ([[rule]]), got an integer"},
	} {
		r := mustLoad(t, "minimal", opts)
		err := r.Apply(Overrides{Seccomp: tc.name, SeccompAudit: true})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--seccomp %s: %v; want %q", tc.name, err, tc.want)
		}
		if !reflect.DeepEqual(r, before) {
			t.Errorf("--seccomp %s changed the profile although it failed", tc.name)
		}
	}
}

func TestEncodeSeccomp(t *testing.T) {
	dir, opts := searchDir(t, map[string]string{
		"seccomp/mine.toml": "default = \"allow\"\n[[rule]]\nsyscalls = [\"chroot\"]\naction = \"kill_thread\"\n",
		"none.toml":         "extends = \"default\"\n[seccomp]\npolicy = \"none\"\n",
		"named.toml":        "[seccomp]\npolicy = \"mine\"\n",
		"inline.toml": `[seccomp]
audit = true
extends = "mine"
default = { errno = "ENOSYS" }
[[seccomp.rule]]
syscalls = ["ioctl"]
action = { errno = 1 }
comment = "TIOCSTI: \"quoted\""
[[seccomp.rule.arg]]
index = 1
op = "masked_eq"
value = 0x5412
mask = 0xffffffff
[[seccomp.rule.arg]]
index = 2
op = "le"
value = "18446744073709551615"
[[seccomp.rule]]
syscalls = ["personality"]
action = "notify"
arg = [{ index = 0, op = "eq", value = 0 }]
[[seccomp.rule]]
syscalls = ["sendmsg", "read", "chdir", "execve", "exit", "exit_group"]
action = "allow"
`,
	})
	for _, tc := range []struct {
		name string
		want string // in the output
	}{
		{"none", "\n[seccomp]\n" + policyfile.NoFilterWarning + "policy = \"none\"\naudit = false\n"},
		{"named", "\n[seccomp]\n# jail seccomp show mine prints its rules\npolicy = \"mine\"\naudit = false\n"},
		{"inline", `
[seccomp]
audit = true
# written in the profile; what it extends is merged in
default = { errno = "ENOSYS" }

[[seccomp.rule]]
syscalls = ["chroot"]
action = "kill_thread"

[[seccomp.rule]]
syscalls = ["ioctl"]
action = { errno = "EPERM" }
comment = "TIOCSTI: \"quoted\""
[[seccomp.rule.arg]]
index = 1
op = "masked_eq"
value = 0x5412
mask = 0xffffffff
[[seccomp.rule.arg]]
index = 2
op = "le"
value = "0xffffffffffffffff"

[[seccomp.rule]]
syscalls = ["personality"]
action = "notify"
[[seccomp.rule.arg]]
index = 0
op = "eq"
value = 0
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustLoad(t, tc.name, opts)
			data, _ := p.Encode()
			if !strings.Contains(string(data), tc.want) {
				t.Errorf("Encode:\n%s\nwant it to hold:\n%s", data, tc.want)
			}
			roundTrip(t, p)
		})
	}
	// The hash covers what a named policy says, not just its name.
	before := mustLoad(t, "named", opts).Hash()
	if err := os.WriteFile(filepath.Join(dir, "seccomp/mine.toml"), []byte("default = \"allow\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if mustLoad(t, "named", opts).Hash() == before {
		t.Error("changing the named policy does not change the profile's hash")
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
