package profiles

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/testfiles"
	"github.com/jail-sandbox/jail/internal/tomlstrict"
)

// reload decodes Encode's output as a profile file on its own, looking
// named policies up as opts says.
func reload(t testing.TB, data []byte, opts Options) *Profile {
	t.Helper()
	l, probs := decode("encoded", data)
	if len(probs) > 0 {
		t.Fatalf("Encode's output does not load:\n%v\n%s", probs, data)
	}
	if l.extends != "" {
		t.Fatalf("Encode wrote extends = %q", l.extends)
	}
	p, probs := finder{opts: opts}.build([]*layer{l})
	if len(probs) > 0 {
		t.Fatalf("Encode's output does not resolve:\n%v\n%s", probs, data)
	}
	return p
}

func roundTrip(t *testing.T, p *Profile) {
	t.Helper()
	data, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got := reload(t, data, p.opts)
	got.Name, got.Files, got.opts = p.Name, p.Files, p.opts
	if !reflect.DeepEqual(got, p) {
		t.Errorf("round trip changed the profile:\n%+v\nwant:\n%+v\nTOML:\n%s", got, p, data)
	}
	again, _ := got.Encode()
	if string(again) != string(data) {
		t.Errorf("Encode is not stable:\n%s\nthen:\n%s", data, again)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, name := range builtinNames {
		t.Run(name, func(t *testing.T) { roundTrip(t, mustLoad(t, name, Options{})) })
	}
	t.Run("everything", func(t *testing.T) {
		dir := testfiles.Write(t, map[string]string{"p.toml": `
description = "quotes \" and \\ and tab\t and ünïcödé"
hostname = "h.example-1"
cwd = "/"
new_session = false
session_keyring = "best-effort"
[user]
uid = 0
gid = 4294967294
name = "_x-1"
host_uid = 1
host_gid = 2
[env]
keep = ["TERM", "LC_ALL", "with space"]
[env.set]
"A B" = "multi\nline\u0001ctl\u007f"
EMPTY = ""
"ü" = "'single'"
[limits]
time = "1h0m1s"
core = "unlimited"
nofile = 0
nproc = 4096
fsize = 1000
cpu_time = "61s"
as = "3T"
stack = "unlimited"
[network]
mode = "none"
[[mount]]
type = "bind"
src = "~/x"
dst = "/x"
optional = true
[[mount]]
type = "ro-bind"
src = "/a b/\"c\""
[[mount]]
type = "tmpfs"
dst = "/t"
[[mount]]
type = "dir"
dst = "/d"
mode = 0o700
[[mount]]
type = "file"
dst = "/f"
content = ""
[[mount]]
type = "file"
dst = "/g"
mode = "4755"
content = """
#!/bin/sh
echo "hi" \\ there
"""
[[mount]]
type = "symlink"
dst = "/s"
target = "../relative/target"
[[mount]]
type = "workspace"
dst = "/w"
`})
		roundTrip(t, mustLoad(t, filepath.Join(dir, "p.toml"), Options{}))
	})
	t.Run("after flags", func(t *testing.T) {
		p := mustLoad(t, "default", Options{})
		err := p.Apply(Overrides{
			Binds: []string{"/srv/data"}, Tmpfs: []string{"/big:2G:0700"},
			Env: []string{"X=1"}, KeepEnv: []string{"TERM"}, TimeLimit: new(time.Duration(0)),
		})
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, p)
	})
}

// TestEncodeWorkspace checks that a workspace given by --workspace is shown,
// and hashed, but written so that the output still loads.
func TestEncodeWorkspace(t *testing.T) {
	p := mustLoad(t, "agent", Options{})
	before := p.Hash()
	if err := p.Apply(Overrides{Workspace: "/home/u/proj"}); err != nil {
		t.Fatal(err)
	}
	data, _ := p.Encode()
	if !strings.Contains(string(data), `# src = "/home/u/proj", from --workspace`) {
		t.Errorf("workspace source not shown:\n%s", data)
	}
	if p.Hash() == before {
		t.Error("the workspace does not change the hash")
	}
	reload(t, data, Options{})
}

func TestHash(t *testing.T) {
	a, b := mustLoad(t, "default", Options{}), mustLoad(t, "default", Options{})
	if a.Hash() != b.Hash() || len(a.Hash()) != 64 {
		t.Errorf("hash is not stable: %s %s", a.Hash(), b.Hash())
	}
	if err := b.Apply(Overrides{Hostname: "other"}); err != nil {
		t.Fatal(err)
	}
	if a.Hash() == b.Hash() {
		t.Error("a different policy has the same hash")
	}
	// The name it was loaded by is not part of the policy.
	b = mustLoad(t, "default", Options{})
	b.Name = "elsewhere"
	if a.Hash() != b.Hash() {
		t.Error("the name changes the hash")
	}
}

// decode decodes data as the profile file named file.
func decode(file string, data []byte) (*layer, Errors) {
	return decodeLayer(tomlstrict.NewDoc(file, data))
}
