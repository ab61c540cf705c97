package testscripts

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/plancache"
)

// TestCorruptCacheEntry damages a real plan-cache entry on disk, each way
// an entry can be damaged: cut short, garbled (its frame, its plan's
// header, a length claiming more than there is), grown past any entry's
// size, or not a file at all. What the lookup cannot read, or the runner's
// decoder refuses, is no entry: the next identical invocation plans again,
// runs as if there were none, says nothing, and leaves a good entry behind.
// Never a crash, nor a hang.
func TestCorruptCacheEntry(t *testing.T) {
	work, err := os.MkdirTemp(s.workRoot, "corrupt-")
	if err != nil {
		t.Fatal(err)
	}
	// Unique, so the entry is found among other runs' (other tests, other
	// checkouts on this host) by its key.
	host := fmt.Sprintf("corrupt-%d-%d", os.Getpid(), time.Now().UnixNano()%1e9)
	status := filepath.Join(work, "st.json")
	run := func(t *testing.T) (cached bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(s.binDir, "jail"), "-p", "default", "--hostname", host,
			"--status-json", status, "--", "/bin/sh", "-c", "hostname")
		cmd.Dir = work
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		os.Remove(status)
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatal("jail hung")
		}
		if err != nil || stdout.String() != host+"\n" || stderr.Len() != 0 {
			t.Fatalf("jail: %v; stdout %q, stderr %q", err, stdout.String(), stderr.String())
		}
		var st struct {
			PlanCached bool `json:"plan_cached"`
		}
		b, err := os.ReadFile(status)
		if err != nil || json.Unmarshal(b, &st) != nil {
			t.Fatalf("the status record: %v: %q", err, b)
		}
		return st.PlanCached
	}
	if run(t) {
		t.Fatal("the first run was replayed")
	}
	plans := filepath.Join(plancache.StateDir(), "plans")
	entry, good := findEntry(t, plans, "hostname="+host+"\x00")
	if !run(t) {
		t.Fatal("the second run was not replayed")
	}
	planAt := planOffset(t, good)

	rewrite := func(b []byte) func(string) error {
		return func(path string) error {
			os.Remove(path)
			return os.WriteFile(path, b, 0o600)
		}
	}
	garble := func(at int, with ...byte) []byte {
		b := bytes.Clone(good)
		copy(b[at:], with)
		return b
	}
	for _, c := range []struct {
		name   string
		damage func(path string) error
	}{
		{"empty", rewrite(nil)},
		{"cut in its header", rewrite(good[:6])},
		{"cut in half", rewrite(good[:len(good)/2])},
		{"cut one byte short", rewrite(good[:len(good)-1])},
		{"its key garbled", rewrite(garble(12, bytes.Repeat([]byte{0xa5}, 16)...))},
		{"its plan's header garbled", rewrite(garble(planAt, bytes.Repeat([]byte{0xff}, 8)...))},
		{"its plan's length past the end", rewrite(garble(planAt-4, 0xff, 0xff, 0xff, 0x7f))},
		{"larger than an entry may be", rewrite(append(bytes.Clone(good), make([]byte, 16<<20)...))},
		{"a FIFO", func(path string) error {
			os.Remove(path)
			return syscall.Mkfifo(path, 0o600)
		}},
		{"a link to a good entry", func(path string) error {
			os.Remove(path)
			if err := os.WriteFile(path+".elsewhere", good, 0o600); err != nil {
				return err
			}
			return os.Symlink(filepath.Base(path)+".elsewhere", path)
		}},
		{"a directory", func(path string) error {
			os.Remove(path)
			return os.Mkdir(path, 0o700)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.damage(entry); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(entry + ".elsewhere")
			if run(t) {
				t.Fatal("the damaged entry was replayed")
			}
			if fi, err := os.Lstat(entry); err == nil && fi.IsDir() {
				// Nothing is stored over a directory; the next run
				// plans again too.
				os.Remove(entry)
				return
			}
			if !run(t) {
				t.Fatal("no good entry was left behind")
			}
		})
	}
}

// findEntry is the one entry in plans whose key holds field.
func findEntry(t *testing.T, plans, field string) (path string, data []byte) {
	t.Helper()
	ents, err := os.ReadDir(plans)
	if err != nil {
		t.Skipf("no plan cache for uid %d: %v", os.Geteuid(), err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(plans, e.Name()))
		if err == nil && bytes.Contains(b, []byte(field)) {
			if path != "" {
				t.Fatalf("two entries hold %q", field)
			}
			path, data = filepath.Join(plans, e.Name()), b
		}
	}
	if path == "" {
		t.Fatalf("no entry in %s holds %q", plans, strings.TrimSuffix(field, "\x00"))
	}
	return path, data
}

// planOffset is where an entry's plan begins (plancache/entry.h): after
// the magic, the version, the key and the deps, and the plan's length.
func planOffset(t *testing.T, b []byte) int {
	t.Helper()
	at := 8
	u32 := func() int {
		if at+4 > len(b) {
			t.Fatal("the entry is malformed")
		}
		v := int(binary.LittleEndian.Uint32(b[at:]))
		at += 4
		return v
	}
	at += u32() + 1 // the key
	for n := u32(); n > 0; n-- {
		at += u32() + 1 // the path
		if u32() != 0 {
			at += 8 + 8 + 4 + 4 + 4 + 8 + 8 + 8
		}
	}
	u32() // the plan's length
	return at
}
