package plancache

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStoreSweepsHalfWritten: a jail killed between writing an entry and
// renaming it leaves a ".new-" file; the next store removes it once it is
// old enough that no live writer can own it, and leaves a fresh one be.
func TestStoreSweepsHalfWritten(t *testing.T) {
	top := t.TempDir()
	if err := os.Chmod(top, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(top, "jail", "plans")
	if err := Store(dir, []byte("first"), Deps{}, []byte("plan")); err != nil {
		t.Fatal(err)
	}
	stale, fresh := filepath.Join(dir, ".new-stale"), filepath.Join(dir, ".new-fresh")
	for _, f := range []string{stale, fresh} {
		if err := os.WriteFile(f, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleNew)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if err := Store(dir, []byte("second"), Deps{}, []byte("plan")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a stale half-written entry is still there: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh half-written entry (a live writer's) was removed: %v", err)
	}
}
