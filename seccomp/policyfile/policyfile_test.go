package policyfile

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testfiles"
	"github.com/jail-sandbox/jail/internal/tomlstrict"
	"github.com/jail-sandbox/jail/seccomp"
)

// searchDir makes a search directory holding policies (seccomp/NAME.toml),
// given as path → content.
func searchDir(t *testing.T, files map[string]string) (string, Options) {
	t.Helper()
	dir := testfiles.Write(t, files)
	return dir, Options{SearchPath: []string{dir}}
}

func mustPolicy(t testing.TB, name string, opts Options) *seccomp.Policy {
	t.Helper()
	p, err := Load(name, opts)
	if err != nil {
		t.Fatalf("Load(%q): %v", name, err)
	}
	return p
}

// decode decodes data as the policy file named file.
func decode(file string, data []byte) (*layer, tomlstrict.Errors) {
	doc := tomlstrict.NewDoc(file, data)
	def, probs, ok := decodeFile(doc)
	if !ok {
		return nil, probs
	}
	return &layer{Doc: doc, Def: def}, probs
}

var (
	ePerm  = seccomp.Action{Kind: seccomp.Errno, Errno: 1}
	eNoSys = seccomp.Action{Kind: seccomp.Errno, Errno: 38}
	allow  = seccomp.Action{Kind: seccomp.Allow}
)

func TestPolicyLanguage(t *testing.T) {
	_, opts := searchDir(t, map[string]string{
		"seccomp/base.toml": `
description = "the base"
default = "allow"
[[rule]]
syscalls = ["mount", "umount2"]
action = { errno = "EPERM" }
comment = "no mounts"
`,
		"seccomp/child.toml": `
description = "the child"
extends = "base"
default = { errno = 38 }
[[rule]]
syscalls = ["ioctl"]
action = "kill_process"
[[rule.arg]]
index = 1
op = "masked_eq"
value = 0x5412
mask = "0xffffffff"
[[rule.arg]]
index = 0
op = "ne"
value = "0xffffffffffffffff"
[[rule]]
syscalls = ["mount"]
action = "allow"
[[rule]]
syscalls = ["sendmsg", "read", "chdir", "execve", "exit", "exit_group"]
action = "allow"
comment = "what jail needs under the filter"
`,
		"seccomp/inherits.toml": `
extends = "child"
rule = [{ syscalls = ["personality"], action = "trap", arg = [{ index = 0, op = "gt", value = 8 }] }]
`,
	})
	want := &seccomp.Policy{
		Name:    "child",
		Default: eNoSys, // the child's own wins
		Rules: []seccomp.Rule{
			{Names: []string{"mount", "umount2"}, Action: ePerm, Comment: "no mounts"},
			{Names: []string{"ioctl"}, Action: seccomp.Action{Kind: seccomp.KillProcess}, Conds: []seccomp.Cond{
				{Index: 1, Op: seccomp.MaskedEq, Value: 0x5412, Mask: 0xffffffff},
				{Index: 0, Op: seccomp.Ne, Value: 1<<64 - 1},
			}},
			{Names: []string{"mount"}, Action: allow}, // after the parent's: it wins
			{Names: seccomp.Needed, Action: allow, Comment: "what jail needs under the filter"},
		},
	}
	if got := mustPolicy(t, "child", opts); !reflect.DeepEqual(got, want) {
		t.Errorf("child:\n%+v\nwant:\n%+v", got, want)
	}
	got := mustPolicy(t, "inherits", opts)
	if got.Default != eNoSys || len(got.Rules) != 5 || got.Rules[4].Action.Kind != seccomp.Trap ||
		got.Rules[4].Conds[0] != (seccomp.Cond{Index: 0, Op: seccomp.Gt, Value: 8}) {
		t.Errorf("inherits (default from its parent, inline array rules): %+v", got)
	}
	if p := mustPolicy(t, "none", opts); !p.None || p.Name != "none" {
		t.Errorf("none = %+v", p)
	}
	// Round trip through Encode.
	for _, name := range []string{"child", "inherits"} {
		p := mustPolicy(t, name, opts)
		data := Encode(p)
		l, probs := decode("shown", data)
		if len(probs) > 0 {
			t.Fatalf("Encode(%s) does not load: %v\n%s", name, probs, data)
		}
		back, err := merge(name, []*layer{l}, nil)
		if err != nil || !reflect.DeepEqual(back, p) {
			t.Errorf("Encode(%s) round trip: %v\n%+v\nwant %+v\n%s", name, err, back, p, data)
		}
	}
	if !strings.Contains(string(Encode(mustPolicy(t, "none", opts))), "NO SECCOMP FILTER") {
		t.Error("Encode(none) does not say so")
	}
}

// TestPolicyGroups checks that a group name is accepted and kept as
// written: the compiler expands it.
func TestPolicyGroups(t *testing.T) {
	groups := slices.Sorted(maps.Keys(seccomp.Groups))
	if len(groups) == 0 {
		t.Skip("seccomp.Groups is empty in this build")
	}
	_, opts := searchDir(t, map[string]string{
		"seccomp/g.toml": "default = \"allow\"\n[[rule]]\nsyscalls = [\"" + groups[0] + "\", \"chroot\"]\naction = \"kill_process\"\n",
	})
	if p := mustPolicy(t, "g", opts); !slices.Equal(p.Rules[0].Names, []string{groups[0], "chroot"}) {
		t.Errorf("names = %q", p.Rules[0].Names)
	}
}

func TestPolicyLookup(t *testing.T) {
	first := testfiles.Write(t, map[string]string{
		"seccomp/mine.toml":  "description = \"first\"\nextends = \"mine\"\n", // its own name: the next one's
		"seccomp/none.toml":  "default = \"allow\"\n",                         // cannot replace "none"
		"seccomp/bad.toml":   "default = \"deny\"\n",
		"seccomp/.hid.toml":  "default = \"allow\"\n",
		"seccomp/notes.txt":  "",
		"seccomp/mine2.toml": "extends = \"mine\"\n",
	})
	second := testfiles.Write(t, map[string]string{
		"seccomp/mine.toml": "description = \"second\"\ndefault = \"log\"\n",
	})
	opts := Options{SearchPath: []string{first, second, filepath.Join(first, "missing")}}
	if p := mustPolicy(t, "mine", opts); p.Default.Kind != seccomp.Log || p.Name != "mine" {
		t.Errorf("mine = %+v; want the first extending the second", p)
	}
	if p := mustPolicy(t, "none", opts); !p.None {
		t.Errorf("none.toml replaced none: %+v", p)
	}
	for _, name := range builtinNames() {
		// A built-in's name is the built-in's: a file cannot replace it.
		dir := testfiles.Write(t, map[string]string{"seccomp/" + name + ".toml": "default = \"allow\"\n"})
		builtin := mustPolicy(t, name, Options{})
		if p := mustPolicy(t, name, Options{SearchPath: []string{dir}}); !reflect.DeepEqual(p, builtin) {
			t.Errorf("a file replaced the built-in %s", name)
		}
	}

	_, err := Load("nosuch", opts)
	wantNames := strings.Join(slices.Sorted(slices.Values(append(builtinNames(), "bad", "mine", "mine2", "none"))), ", ")
	if err == nil || !strings.Contains(err.Error(), `no seccomp policy "nosuch" in `+filepath.Join(first, "seccomp")+", ") ||
		!strings.HasSuffix(err.Error(), "policies: "+wantNames) {
		t.Errorf("Load(nosuch) = %v; want where it looked and %s", err, wantNames)
	}
	var probs tomlstrict.Errors
	if _, err := Load("bad", opts); !errors.As(err, &probs) || probs[0].String() !=
		filepath.Join(first, "seccomp/bad.toml")+`:1:1: default: "deny": unknown action: want `+actionChoices {
		t.Errorf("Load(bad) = %v", err)
	}
	for _, bad := range []string{"", "../x", "-x", "a b", "x/y"} {
		if _, err := Load(bad, opts); err == nil || !strings.Contains(err.Error(), "not a policy name") {
			t.Errorf("Load(%q) = %v", bad, err)
		}
	}

	entries, err := List(opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if e.Source != "built-in" || e.Name == "none" {
			got = append(got, e.Name+"|"+e.Source+"|"+e.Description)
		}
	}
	want := []string{
		"bad|" + filepath.Join(first, "seccomp/bad.toml") + `|does not load: ` + filepath.Join(first, "seccomp/bad.toml") + `:1:1: default: "deny": unknown action: want ` + actionChoices,
		"mine|" + filepath.Join(first, "seccomp/mine.toml") + "|first",
		"mine2|" + filepath.Join(first, "seccomp/mine2.toml") + "|",
		"none|built-in|no syscall filter at all: only for a profile that says so",
	}
	if !slices.Equal(got, want) {
		t.Errorf("List:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, name := range builtinNames() {
		i := slices.IndexFunc(entries, func(e Entry) bool { return e.Name == name })
		if i < 0 || entries[i].Source != "built-in" || strings.HasPrefix(entries[i].Description, "does not load") {
			t.Errorf("built-in %s listed as %+v", name, entries[i])
		}
	}
}

// TestBuiltinPolicies checks every embedded policy loads and passes the
// policy model's own check.
func TestBuiltinPolicies(t *testing.T) {
	names := builtinNames()
	if !slices.Contains(names, Default) {
		t.Fatalf("no built-in %q policy: %v", Default, names)
	}
	for _, name := range names {
		p := mustPolicy(t, name, Options{})
		if errs := p.Check(); len(errs) > 0 || p.None || p.Name != name {
			t.Errorf("%s: %v (%+v)", name, errs, p)
		}
	}
}

func TestPolicyOwnership(t *testing.T) {
	dir, opts := searchDir(t, map[string]string{
		"seccomp/open.toml":   "default = \"allow\"\n",
		"seccomp/theirs.toml": "default = \"allow\"\n",
	})
	if err := os.Chmod(filepath.Join(dir, "seccomp/open.toml"), 0o664); err != nil {
		t.Fatal(err)
	}
	if _, err := Load("open", opts); err == nil || !strings.Contains(err.Error(), "seccomp policy "+filepath.Join(dir, "seccomp/open.toml")+" is writable by group or others") {
		t.Errorf("Load(open) = %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file away")
	}
	if err := os.Chown(filepath.Join(dir, "seccomp/theirs.toml"), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Load("theirs", opts); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Errorf("Load(theirs) = %v", err)
	}
}
