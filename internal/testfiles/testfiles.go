// Package testfiles holds what jail's tests share to set the scene on
// disk, and to check a generated file: the profile, policy and search-path
// tests each need the same.
package testfiles

import (
	"bytes"
	"go/format"
	"os"
	"path/filepath"
	"testing"
)

// Write creates files (name → content, names may hold directories) in a
// new temporary directory, and returns it.
func Write(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Fresh fails t unless the file at path is src, formatted: a generated
// file in step with what generates it. regen is the command that
// regenerates it.
func Fresh(t testing.TB, path, src, regen string) {
	t.Helper()
	want, err := format.Source([]byte(src))
	if err != nil {
		t.Fatalf("generated code: %v\n%s", err, src)
	}
	if have, _ := os.ReadFile(path); !bytes.Equal(have, want) {
		t.Fatalf("%s is stale: run %s", path, regen)
	}
}
