package mount

// Files mounted over others (Spec.Over), as planned: the op, its place
// after the bind that shows the covered file, the root's size, and what
// the planner refuses. fileover_jail_test.go runs them in real jails.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planOp is one op of a mount section, as the test reads it back.
type planOp struct {
	code    uint32
	dst     string
	mode    uint32
	content []byte
}

// The op codes as mount.h numbers them. Spelled out rather than read
// through cgo (which tests cannot use): a renumbering breaks this test.
const (
	wantBind     = 1
	wantTmpfs    = 2
	wantProc     = 3
	wantDev      = 4
	wantSymlink  = 5
	wantDir      = 6
	wantFile     = 7
	wantFileOver = 8
)

// readOps decodes p's ops as root.c's decode does.
func readOps(t *testing.T, p *Prepared) []planOp {
	t.Helper()
	b := p.ops.Data()
	u32 := func() uint32 {
		if len(b) < 4 {
			t.Fatal("mount section: short u32")
		}
		v := binary.LittleEndian.Uint32(b)
		b = b[4:]
		return v
	}
	bytesField := func() []byte {
		n := u32()
		if uint32(len(b)) < n+1 || b[n] != 0 {
			t.Fatal("mount section: bad bytes field")
		}
		v := b[:n]
		b = b[n+1:]
		return v
	}
	str := func() string { return string(bytesField()) }
	strs := func() {
		for n := u32(); n > 0; n-- {
			str()
		}
	}
	var ops []planOp
	for i := uint32(0); i < p.nops; i++ {
		o := planOp{code: u32()}
		switch o.code {
		case wantBind:
			u32()
			str()
			u32()
			o.dst = str()
		case wantTmpfs:
			u32()
			u32()
			u32() // the u64 size, then the mode
			o.dst = str()
		case wantProc:
			o.dst = str()
			strs()
			strs()
			strs()
		case wantDev:
			o.dst = str()
			strs()
		case wantSymlink:
			str()
			o.dst = str()
		case wantDir:
			o.mode = u32()
			o.dst = str()
		case wantFile, wantFileOver:
			o.mode = u32()
			o.content = bytesField()
			o.dst = str()
		default:
			t.Fatalf("mount section: op code %d", o.code)
		}
		ops = append(ops, o)
	}
	if len(b) != 0 {
		t.Fatalf("mount section: %d bytes after the last op", len(b))
	}
	return ops
}

func opList(ops []planOp) string {
	var s []string
	for _, o := range ops {
		s = append(s, fmt.Sprintf("%d:%s", o.code, o.dst))
	}
	return strings.Join(s, " ")
}

// A file over one inside a read-only bind is planned after that bind,
// whatever the order it was given in, with its whole content (a CA bundle
// is about 250 KB), and the root tmpfs, which holds the content, grows by
// it.
func TestFileOverPlanned(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("host\n"), 0o644))
	content := bytes.Repeat([]byte("0123456789abcdef"), 16<<10) // 256 KiB
	specs := []Spec{
		{Kind: File, Over: true, Dst: "/etc/certs/ca.crt", Content: content},
		{Kind: ReadOnlyBind, Src: dir, Dst: "/etc/certs"},
		{Kind: Tmpfs, Dst: "/tmp"},
	}
	for _, root := range []bool{false, true} {
		plain, err := Prepare(specs[1:], Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		p, err := Prepare(specs, Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		ops := readOps(t, p)
		want := fmt.Sprintf("%d:/tmp %d:/etc/certs %d:/etc/certs/ca.crt", wantTmpfs, wantBind, wantFileOver)
		if got := opList(ops); got != want {
			t.Errorf("root %v: ops %s, want %s", root, got, want)
		}
		last := ops[len(ops)-1]
		if last.mode != 0o644 || !bytes.Equal(last.content, content) {
			t.Errorf("root %v: mode %o, %d bytes of content; want 644 and all %d", root, last.mode, len(last.content), len(content))
		}
		if grown := p.rootSize - plain.rootSize; grown < uint64(len(content)) {
			t.Errorf("root %v: the root grew by %d bytes for %d of content", root, grown, len(content))
		}
	}
}

// A file over another at the same path: over a small read-only file (which
// the plan copies onto the root) and over a bound one alike; the cover
// comes after it either way.
func TestFileOverSamePath(t *testing.T) {
	dir := t.TempDir()
	small, big := filepath.Join(dir, "small"), filepath.Join(dir, "big")
	must(t, os.WriteFile(small, []byte("small\n"), 0o644))
	must(t, os.WriteFile(big, bytes.Repeat([]byte("x"), copyMax+1), 0o644))
	p, err := Prepare([]Spec{
		{Kind: File, Over: true, Dst: "/a", Content: []byte("over a\n"), Mode: 0o444},
		{Kind: File, Over: true, Dst: "/b", Content: []byte("over b\n")},
		{Kind: ReadOnlyBind, Src: small, Dst: "/a"},
		{Kind: ReadOnlyBind, Src: big, Dst: "/b"},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops := readOps(t, p)
	want := fmt.Sprintf("%d:/a %d:/b %d:/a %d:/b", wantFile, wantBind, wantFileOver, wantFileOver)
	if got := opList(ops); got != want {
		t.Errorf("ops %s, want %s", got, want)
	}
	if ops[2].mode != 0o444 || string(ops[2].content) != "over a\n" {
		t.Errorf("cover of /a: mode %o, content %q", ops[2].mode, ops[2].content)
	}
}

// What cannot be covered is refused while planning, with the path.
func TestFileOverRefused(t *testing.T) {
	for _, tc := range []struct {
		specs []Spec
		want  string
	}{
		{[]Spec{{Kind: Tmpfs, Over: true, Dst: "/t"}}, "tmpfs /t: only a file can be mounted over"},
		{[]Spec{{Kind: File, Over: true, Dst: "/etc/x"}}, "file /etc/x: nothing there to cover: no bind before it"},
		{[]Spec{{Kind: Tmpfs, Dst: "/t"}, {Kind: File, Over: true, Dst: "/t/x"}}, "file /t/x: nothing there to cover: the tmpfs at /t"},
		{[]Spec{{Kind: Symlink, Dst: "/l", Target: "x"}, {Kind: File, Over: true, Dst: "/l"}}, "file /l: nothing there to cover: the symlink at /l"},
		{[]Spec{{Kind: Proc, Dst: "/proc"}, {Kind: File, Over: true, Dst: "/proc/cpuinfo"}}, "the proc at /proc"},
		{[]Spec{{Kind: Bind, Src: "/w", Dst: "/w"}, {Kind: Tmpfs, Dst: "/w/t"}, {Kind: File, Over: true, Dst: "/w/t/x"}}, "the tmpfs at /w/t"},
		{[]Spec{
			{Kind: ReadOnlyBind, Src: "/w", Dst: "/w"},
			{Kind: File, Over: true, Dst: "/w/x"},
			{Kind: File, Over: true, Dst: "/w/x"},
		}, "file /w/x: two mounts at the same path"},
	} {
		_, err := ordered(tc.specs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.specs, err, tc.want)
		}
	}
	// Over a file in a bind: fine, though a plain file there is not.
	if _, err := ordered([]Spec{{Kind: ReadOnlyBind, Src: "/w", Dst: "/w"}, {Kind: File, Over: true, Dst: "/w/a/x"}}); err != nil {
		t.Errorf("over a file in a bind: %v", err)
	}
}
