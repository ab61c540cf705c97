package profiles

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/testfiles"
)

func TestMerge(t *testing.T) {
	dir := testfiles.Write(t, map[string]string{
		"parent.toml": `
description = "parent"
hostname = "parent"
cwd = "/srv"
new_session = true
[user]
uid = 2000
gid = 2000
name = "dev"
[env]
keep = ["A", "B"]
[env.set]
X = "1"
Y = "2"
[limits]
time = "5m"
core = 100
nproc = 64
[[mount]]
type = "tmpfs"
dst = "/a"
[[mount]]
type = "dir"
dst = "/b"
[[mount]]
type = "proc"
dst = "/proc"
`,
		"child.toml": `
extends = "parent"
hostname = "child"
new_session = false
[user]
gid = 3000
name = ""
[env]
keep = ["B", "C"]
[env.set]
Y = "3"
Z = "4"
[limits]
core = 0
[[mount]]
type = "tmpfs"
dst = "/b"
size = "1M"
[[mount]]
type = "dir"
dst = "/c"
`,
	})
	p := mustLoad(t, filepath.Join(dir, "child.toml"), Options{SearchPath: []string{dir}})
	u64 := func(n uint64) *uint64 { return &n }
	want := &Profile{
		Name:           filepath.Join(dir, "child.toml"),
		Description:    "parent", // not set by the child: inherited
		Hostname:       "child",
		Cwd:            "/srv",
		NewSession:     false, // false is a value, not "unset"
		SessionKeyring: "own", // the default: neither sets it
		User:           User{UID: 2000, GID: 3000, Name: "", HostUID: 65534, HostGID: 65534},
		Env: Env{
			Keep: []string{"A", "B", "C"},
			Set:  map[string]string{"X": "1", "Y": "3", "Z": "4"},
		},
		Limits:  Limits{Time: 5 * time.Minute, Core: u64(0), Nproc: u64(64)},
		Network: Network{Mode: "none"},
		Seccomp: Seccomp{Policy: "default", resolved: mustPolicy(t, "default", Options{})},
		Mounts: []Mount{
			{Type: "tmpfs", Dst: "/a"},
			{Type: "tmpfs", Dst: "/b", Size: 1 << 20}, // replaced in place
			{Type: "proc", Dst: "/proc"},
			{Type: "dir", Dst: "/c"},
		},
	}
	want.opts = Options{SearchPath: []string{dir}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("merged:\n%+v\nwant:\n%+v", p, want)
	}
}

// TestMergeDefaults checks what an empty profile means: the documented
// defaults, not Go's zero values.
func TestMergeDefaults(t *testing.T) {
	dir := testfiles.Write(t, map[string]string{"empty.toml": "# nothing\n"})
	p := mustLoad(t, filepath.Join(dir, "empty.toml"), Options{})
	want := defaults()
	want.Name = filepath.Join(dir, "empty.toml")
	want.Seccomp.resolved = mustPolicy(t, "default", Options{})
	if !reflect.DeepEqual(p, &want) {
		t.Errorf("empty profile = %+v, want %+v", p, want)
	}
}
