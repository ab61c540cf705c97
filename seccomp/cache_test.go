package seccomp_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jail-sandbox/jail/seccomp"
)

// small is a policy that compiles quickly and differs by errno, so each
// test's entries are its own.
func small(errno int) *seccomp.Policy {
	return &seccomp.Policy{
		Name:    "small",
		Default: seccomp.Action{Kind: seccomp.Allow},
		Rules:   []seccomp.Rule{{Names: []string{"acct"}, Action: seccomp.Action{Kind: seccomp.Errno, Errno: errno}}},
	}
}

func TestCachedCompilesOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	first, compiled, err := seccomp.Cached(small(1), seccomp.Mode{}, dir)
	if err != nil || !compiled {
		t.Fatalf("first: compiled %v, err %v; want a compile", compiled, err)
	}
	again, compiled, err := seccomp.Cached(small(1), seccomp.Mode{}, dir)
	if err != nil || compiled {
		t.Fatalf("repeat: compiled %v, err %v; want the cached program", compiled, err)
	}
	if !bytes.Equal(first.BPF, again.BPF) || again.DefaultErrno != first.DefaultErrno || len(again.Answers) != 1 || again.Answers[0].Errno != 1 || !again.Notify {
		t.Errorf("cached program differs: %+v, compiled %+v", again, first)
	}
	// Another mode or policy is another entry.
	if _, compiled, _ := seccomp.Cached(small(1), seccomp.Mode{Audit: true}, dir); !compiled {
		t.Error("audit mode reused the enforcing program")
	}
	if _, compiled, _ := seccomp.Cached(small(2), seccomp.Mode{}, dir); !compiled {
		t.Error("another policy reused the first one's program")
	}
}

// An entry someone else could have written, or a damaged one, is compiled
// again, never loaded.
func TestCachedDistrustsEntries(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	if _, _, err := seccomp.Cached(small(3), seccomp.Mode{}, dir); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("%d entries, want 1", len(ents))
	}
	entry := filepath.Join(dir, ents[0].Name())
	if err := os.Chmod(entry, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, compiled, _ := seccomp.Cached(small(3), seccomp.Mode{}, dir); !compiled {
		t.Error("a group- or world-readable entry was trusted")
	}
	if err := os.WriteFile(entry, []byte{1, 0, 0}, 0o600); err != nil {
		t.Fatal(err)
	}
	if prog, compiled, err := seccomp.Cached(small(3), seccomp.Mode{}, dir); err != nil || !compiled || len(prog.BPF) == 0 {
		t.Errorf("a truncated entry: compiled %v, err %v", compiled, err)
	}
	// A directory others can write is not used at all.
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o777)
	seccomp.Cached(small(3), seccomp.Mode{}, shared)
	if ents, _ := os.ReadDir(shared); len(ents) != 0 {
		t.Errorf("wrote %d entries into a shared directory", len(ents))
	}
}

func TestCachedPrunes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	if _, _, err := seccomp.Cached(small(4), seccomp.Mode{}, dir); err != nil {
		t.Fatal(err)
	}
	for i := range 80 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("old-%d", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Make the real entry the most recently used, then add one more.
	if _, compiled, _ := seccomp.Cached(small(4), seccomp.Mode{}, dir); compiled {
		t.Fatal("entry missing")
	}
	if _, _, err := seccomp.Cached(small(5), seccomp.Mode{}, dir); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 64 {
		t.Errorf("%d entries after a write, want at most 64", len(ents))
	}
	if _, compiled, _ := seccomp.Cached(small(4), seccomp.Mode{}, dir); compiled {
		t.Error("pruning removed the most recently used entry")
	}
}
