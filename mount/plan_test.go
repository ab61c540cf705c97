package mount

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOrderedParentsFirst(t *testing.T) {
	got, err := ordered([]Spec{
		{Kind: Tmpfs, Dst: "/a/b/c"},
		{Kind: Tmpfs, Dst: "/a"},
		{Kind: Tmpfs, Dst: "/z"},
		{Kind: Dir, Dst: "/a/b"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var dsts []string
	for _, s := range got {
		dsts = append(dsts, s.Dst)
	}
	if want := "/a /z /a/b /a/b/c"; strings.Join(dsts, " ") != want {
		t.Errorf("order %v, want %s", dsts, want)
	}
}

func TestOrderedRefuses(t *testing.T) {
	for _, tc := range []struct {
		specs []Spec
		want  string
	}{
		{[]Spec{{Kind: Tmpfs, Dst: "relative"}}, "not an absolute path"},
		{[]Spec{{Kind: Tmpfs, Dst: "/"}}, "cannot replace the jail's root"},
		{[]Spec{{Kind: Tmpfs, Dst: "/a/../b"}}, "not a clean path"},
		{[]Spec{{Kind: Tmpfs, Dst: "/a/"}}, "not a clean path"},
		{[]Spec{{Kind: Tmpfs, Dst: "/a"}, {Kind: Dir, Dst: "/a"}}, "two mounts at the same path"},
		{[]Spec{{Kind: Bind, Src: "/w", Dst: "/w"}, {Kind: File, Dst: "/w/f"}}, "inside the bind mount at /w"},
		{[]Spec{{Kind: Proc, Dst: "/proc"}, {Kind: Symlink, Dst: "/proc/x", Target: "y"}}, "inside the proc mount"},
	} {
		_, err := ordered(tc.specs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.specs, err, tc.want)
		}
	}
	// Files on a tmpfs or the root are fine.
	if _, err := ordered([]Spec{{Kind: Tmpfs, Dst: "/t"}, {Kind: File, Dst: "/t/f"}, {Kind: File, Dst: "/etc/x"}}); err != nil {
		t.Errorf("files on tmpfs and root: %v", err)
	}
}

func TestResolveSource(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	must(t, os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o755))
	must(t, os.MkdirAll(ws, 0o755))
	must(t, os.Symlink("real", filepath.Join(dir, "link")))
	must(t, os.Symlink(filepath.Join(dir, "real"), filepath.Join(ws, "planted")))

	// Root's symlinks are followed (the test runs as root or not at all).
	if os.Geteuid() != 0 {
		t.Skip("needs root to own symlinks as root")
	}
	r := newResolver(nil)
	got, _, err := r.resolve(filepath.Join(dir, "link", "sub"))
	if err != nil || got != filepath.Join(dir, "real", "sub") {
		t.Errorf("through root's link: %q, %v", got, err)
	}
	// Anyone else's are not: a jail could have planted them.
	must(t, os.Lchown(filepath.Join(ws, "planted"), 65534, 65534))
	_, _, err = newResolver(nil).resolve(filepath.Join(ws, "planted", "sub"))
	if err == nil || !strings.Contains(err.Error(), "not owned by root") {
		t.Errorf("through another user's link: %v", err)
	}
	// Loops end.
	must(t, os.Symlink("loop", filepath.Join(dir, "loop")))
	if _, _, err := r.resolve(filepath.Join(dir, "loop")); err == nil {
		t.Error("symlink loop resolved")
	}
	// Missing is missing.
	if _, _, err := r.resolve(filepath.Join(dir, "nope")); !os.IsNotExist(err) {
		t.Errorf("missing: %v", err)
	}
}

func TestMirroredLink(t *testing.T) {
	dir := t.TempDir()
	usr := filepath.Join(dir, "usr")
	must(t, os.MkdirAll(filepath.Join(usr, "lib"), 0o755))
	lib := filepath.Join(dir, "lib")
	must(t, os.Symlink("usr/lib", lib))
	specs := []Spec{
		{Kind: ReadOnlyBind, Src: usr, Dst: usr},
		{Kind: ReadOnlyBind, Src: lib, Dst: lib},
	}
	target, ok := newResolver(specs).mirroredLink(lib)
	if !ok || target != "usr/lib" {
		t.Errorf("mirroredLink = %q, %v; want usr/lib, true", target, ok)
	}
	// Not when the link leads somewhere the jail does not mount.
	if _, ok := newResolver(specs[1:]).mirroredLink(lib); ok {
		t.Error("mirrored a link into nothing")
	}
}

func TestPrepareMissingSource(t *testing.T) {
	dir := t.TempDir()
	_, err := Prepare([]Spec{{Kind: ReadOnlyBind, Src: filepath.Join(dir, "nope"), Dst: "/x"}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "source does not exist") {
		t.Errorf("missing source: %v", err)
	}
	// A workspace says what fixes it, not a profile key.
	_, err = Prepare([]Spec{{Kind: Bind, Src: filepath.Join(dir, "nope"), Dst: "/w", IfMissing: "make it"}}, Options{})
	if want := "bind " + filepath.Join(dir, "nope") + " on /w: source does not exist: make it"; err == nil || err.Error() != want {
		t.Errorf("missing workspace: %v, want %q", err, want)
	}
	p, err := Prepare([]Spec{{Kind: ReadOnlyBind, Src: filepath.Join(dir, "nope"), Dst: "/x", Optional: true}}, Options{})
	if err != nil || p.nops != 0 {
		t.Errorf("optional missing source: %v, %d ops", err, p.nops)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
