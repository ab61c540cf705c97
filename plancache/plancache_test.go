package plancache

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/wire"
)

// newRun makes a directory that stands for /run: the caller's runtime
// directory is run itself for root, run/user/UID (private, as systemd
// makes it) for others. It returns this caller with that run, and where
// the entries go.
func newRun(t *testing.T) (run Env, plans string) {
	run = Env{Run: t.TempDir(), EUID: os.Geteuid()}
	rt := run.Run
	if os.Geteuid() != 0 {
		rt = filepath.Join(run.Run, "user", strconv.Itoa(os.Geteuid()))
		if err := os.MkdirAll(rt, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return run, filepath.Join(rt, "jail", "plans")
}

// encode is deps as the runner gets them from Go.
func encode(t *testing.T, d Deps) []byte {
	t.Helper()
	var w wire.Writer
	if err := d.Encode(&w); err != nil {
		t.Fatal(err)
	}
	return w.Data()
}

// depsOf are the deps of files as lstat sees them now.
func depsOf(t *testing.T, files ...string) []byte {
	d := Deps{}
	for _, f := range files {
		fi, err := os.Lstat(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		d[f] = fi
	}
	return encode(t, d)
}

func argv(flags ...string) []string {
	return append(append([]string{"jail"}, flags...), "--", "true")
}

// entries are the names in plans.
func entries(t *testing.T, plans string) []string {
	t.Helper()
	ents, err := os.ReadDir(plans)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestRoundTrip: what the runner stores, the constructor finds for the
// same invocation, and for no other.
func TestRoundTrip(t *testing.T) {
	run, plans := newRun(t)
	plan := []byte("a run plan\x00with a NUL")
	dep := filepath.Join(t.TempDir(), "profile.toml")
	os.WriteFile(dep, []byte("x"), 0o600)
	a := argv("-p", "default", "--hostname", "h", "--status-json", "a.json")
	if err := store(run, a, plan, depsOf(t, dep, dep+".absent")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		argv []string
		hit  bool
	}{
		{a, true},
		// Another command, another status record, --profile for -p:
		// the same plan.
		{append(a[:len(a)-1:len(a)-1], "echo", "x"), true},
		{argv("--profile", "default", "--hostname", "h", "--status-json", "b.json"), true},
		{argv("--profile=default", "--hostname=h"), true},
		{argv("-p", "default", "--hostname", "other"), false},
		{argv("-p", "default", "--hostname", "h", "--env", "A=b"), false},
		{argv("-p", "default"), false},
	} {
		got, ok := load(run, tc.argv)
		if ok != tc.hit || ok && !bytes.Equal(got, plan) {
			t.Errorf("load %q = %q, %v; want hit %v", tc.argv, got, ok, tc.hit)
		}
	}
	if fi, err := os.Stat(filepath.Join(plans, entries(t, plans)[0])); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the entry: %v, %v; want mode 0600", fi.Mode(), err)
	}

	// A file the plan came from changes, or one that was absent appears:
	// the entry is stale.
	os.WriteFile(dep+".absent", nil, 0o600)
	if _, ok := load(run, a); ok {
		t.Error("a plan whose absent dep appeared was used")
	}
	os.Remove(dep + ".absent")
	if _, ok := load(run, a); !ok {
		t.Error("the entry was not used once the dep was absent again")
	}
	os.WriteFile(dep, []byte("y"), 0o600)
	if _, ok := load(run, a); ok {
		t.Error("a plan whose profile changed was used")
	}
}

// TestNotStored: what Go says must not be cached, and invocations the walk
// leaves to Go, are not stored; nor are deps the lookup could not read.
func TestNotStored(t *testing.T) {
	run, _ := newRun(t)
	deps := depsOf(t)
	for _, tc := range []struct {
		what string
		argv []string
		deps []byte
	}{
		{"no deps (Go: not to be cached)", argv("-p", "default"), nil},
		{"truncated deps", argv("-p", "default"), depsOf(t, "/")[:10]},
		{"deps and more", argv("-p", "default"), append(depsOf(t, "/"), 0)},
		{"a session id Go refuses", argv("-p", "default", "--session", "-s"), deps},
		{"a flag run does not have", argv("-p", "default", "--no-such-flag", "x"), deps},
		{"no command", []string{"jail", "-p", "default"}, deps},
		{"a subcommand", []string{"jail", "profiles", "--", "true"}, deps},
	} {
		if err := store(run, tc.argv, []byte("plan"), tc.deps); err == nil {
			t.Errorf("%s: stored", tc.what)
		}
		if _, ok := load(run, tc.argv); ok {
			t.Errorf("%s: found", tc.what)
		}
	}
}

// TestPrivate: an entry is stored and used only in directories that are
// the caller's alone, and only if it is a private regular file itself.
func TestPrivate(t *testing.T) {
	a := argv("--hostname", "private")
	stored := func(t *testing.T) (run Env, plans, entry string) {
		run, plans = newRun(t)
		if err := store(run, a, []byte("plan"), depsOf(t)); err != nil {
			t.Fatal(err)
		}
		if _, ok := load(run, a); !ok {
			t.Fatal("not found")
		}
		return run, plans, filepath.Join(plans, entries(t, plans)[0])
	}
	refused := func(t *testing.T, run Env, plans string) {
		t.Helper()
		if _, ok := load(run, a); ok {
			t.Error("used")
		}
		before := entries(t, plans)
		if err := store(run, argv("--hostname", "another"), []byte("plan"), depsOf(t)); err == nil {
			t.Error("stored")
		}
		if after := entries(t, plans); len(after) != len(before) {
			t.Errorf("written: %q, was %q", after, before)
		}
	}
	for _, tc := range []struct {
		what   string
		change func(state, plans string) error
	}{
		{"plans others may enter", func(_, plans string) error { return os.Chmod(plans, 0o711) }},
		{"plans others may read", func(_, plans string) error { return os.Chmod(plans, 0o740) }},
		{"state others may enter", func(state, _ string) error { return os.Chmod(state, 0o701) }},
		{"plans a link to a private dir", func(_, plans string) error {
			if err := os.Rename(plans, plans+".real"); err != nil {
				return err
			}
			return os.Symlink(filepath.Base(plans)+".real", plans)
		}},
		{"state a link to a private dir", func(state, _ string) error {
			if err := os.Rename(state, state+".real"); err != nil {
				return err
			}
			return os.Symlink(filepath.Base(state)+".real", state)
		}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			run, plans, _ := stored(t)
			if err := tc.change(filepath.Dir(plans), plans); err != nil {
				t.Fatal(err)
			}
			refused(t, run, plans)
		})
	}
	if os.Geteuid() == 0 {
		t.Run("plans someone else's", func(t *testing.T) {
			run, plans, _ := stored(t)
			if err := os.Chown(plans, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			refused(t, run, plans)
		})
	} else {
		t.Run("runtime dir others may enter", func(t *testing.T) {
			run, plans, _ := stored(t)
			if err := os.Chmod(filepath.Dir(filepath.Dir(plans)), 0o755); err != nil {
				t.Fatal(err)
			}
			refused(t, run, plans)
		})
	}

	// The entry itself: readable by others, someone else's, a link to a
	// good entry, a FIFO (which must not hang the lookup), a directory.
	for _, tc := range []struct {
		what   string
		change func(entry string) error
	}{
		{"an entry others may read", func(e string) error { return os.Chmod(e, 0o640) }},
		{"a link to an entry", func(e string) error {
			if err := os.Rename(e, e+".real"); err != nil {
				return err
			}
			return os.Symlink(filepath.Base(e)+".real", e)
		}},
		{"a FIFO", func(e string) error {
			os.Remove(e)
			return syscall.Mkfifo(e, 0o600)
		}},
		{"a directory", func(e string) error {
			os.Remove(e)
			return os.Mkdir(e, 0o700)
		}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			run, _, entry := stored(t)
			if err := tc.change(entry); err != nil {
				t.Fatal(err)
			}
			if _, ok := load(run, a); ok {
				t.Error("used")
			}
		})
	}
	if os.Geteuid() == 0 {
		t.Run("an entry someone else's", func(t *testing.T) {
			run, _, entry := stored(t)
			if err := os.Chown(entry, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			if _, ok := load(run, a); ok {
				t.Error("used")
			}
		})
	}
	// Stored again over a link: the link is replaced, nothing is
	// written through it.
	t.Run("stored over a link", func(t *testing.T) {
		run, _, entry := stored(t)
		target := filepath.Join(t.TempDir(), "target")
		os.WriteFile(target, []byte("untouched"), 0o600)
		os.Remove(entry)
		if err := os.Symlink(target, entry); err != nil {
			t.Fatal(err)
		}
		if err := store(run, a, []byte("plan"), depsOf(t)); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(target); string(b) != "untouched" {
			t.Errorf("written through the link: %q", b)
		}
		if isLink(entry) {
			t.Error("the link is still there")
		}
		if _, ok := load(run, a); !ok {
			t.Error("the new entry is not used")
		}
	})
}

func isLink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// TestCorrupt: an entry cut short or garbled anywhere is a miss, never a
// crash nor a read past its end; the lookup checks every length it reads.
func TestCorrupt(t *testing.T) {
	run, plans := newRun(t)
	a := argv("--hostname", "corrupt")
	// Files: every field of their deps is compared (a directory's size
	// and times are not).
	dir := t.TempDir()
	f1, f2 := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	os.WriteFile(f1, []byte("1"), 0o600)
	os.WriteFile(f2, []byte("2"), 0o600)
	if err := store(run, a, []byte("the plan"), depsOf(t, f1, f2)); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(plans, entries(t, plans)[0])
	good, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	write := func(b []byte) {
		if err := os.WriteFile(entry, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for n := 0; n < len(good); n++ {
		write(good[:n])
		if _, ok := load(run, a); ok {
			t.Fatalf("an entry cut to %d of %d bytes was used", n, len(good))
		}
	}
	// Four bytes garbled anywhere: a length field (the key's, the deps'
	// count, a path's, the plan's) then claims more than there is, the
	// key or a dep no longer matches, or the magic is wrong. Only the
	// plan's own bytes may be garbled and found: the runner's decoder
	// refuses what it cannot read.
	planAt := len(good) - 1 - len("the plan")
	for off := 0; off+4 <= len(good); off++ {
		b := bytes.Clone(good)
		copy(b[off:], []byte{0xff, 0xff, 0xff, 0x7f})
		write(b)
		if plan, ok := load(run, a); ok && (off < planAt || off+4 > planAt+len("the plan") || len(plan) != len("the plan")) {
			t.Fatalf("garbled at %d of %d: read %q", off, len(good), plan)
		}
	}
	// Larger than any entry may be.
	write(append(bytes.Clone(good), make([]byte, 16<<20)...))
	if _, ok := load(run, a); ok {
		t.Error("an oversized entry was used")
	}
	write(good)
	if _, ok := load(run, a); !ok {
		t.Error("the entry restored is not used")
	}
}

// TestPrune: past 64 entries the least recently used go, down to 48; a
// half-written entry is removed once no live writer can own it.
func TestPrune(t *testing.T) {
	run, plans := newRun(t)
	deps := depsOf(t)
	for i := 0; i < 64; i++ {
		if err := store(run, argv("--hostname", fmt.Sprint("h", i)), []byte("plan"), deps); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(entries(t, plans)); n != 64 {
		t.Fatalf("%d entries, want 64", n)
	}
	// Used in order: h0 the longest ago.
	byHost := map[string]string{}
	for _, n := range entries(t, plans) {
		b, _ := os.ReadFile(filepath.Join(plans, n))
		for i := 0; i < 64; i++ {
			if bytes.Contains(b, []byte(fmt.Sprintf("hostname=h%d\x00", i))) {
				byHost[fmt.Sprint("h", i)] = n
			}
		}
	}
	base := time.Now().Add(-time.Hour)
	for i := 0; i < 64; i++ {
		at := base.Add(time.Duration(i) * time.Second)
		os.Chtimes(filepath.Join(plans, byHost[fmt.Sprint("h", i)]), at, at)
	}
	stale, fresh := filepath.Join(plans, ".new-stale"), filepath.Join(plans, ".new-fresh")
	for _, f := range []string{stale, fresh} {
		os.WriteFile(f, []byte("half"), 0o600)
	}
	old := time.Now().Add(-2 * time.Minute)
	os.Chtimes(stale, old, old)

	// The 65th entry (with the fresh half-written one, 66 files).
	if err := store(run, argv("--hostname", "h64"), []byte("plan"), deps); err != nil {
		t.Fatal(err)
	}
	if n := len(entries(t, plans)); n != 48 {
		t.Errorf("%d entries after pruning, want 48", n)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a stale half-written entry is still there: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh half-written entry (a live writer's) was removed: %v", err)
	}
	// Kept: the new entry, the fresh half-written one, h18 to h63.
	for i := 0; i <= 64; i++ {
		_, ok := load(run, argv("--hostname", fmt.Sprint("h", i)))
		if want := i >= 18; ok != want {
			t.Errorf("h%d: found %v, want %v", i, ok, want)
		}
	}
}

// TestSessionKey: a session's run is cached under its workspace, which
// JAIL_STATE_DIR (or HOME) places: the same flags with another state
// directory, or another session, are another plan; an id or a state
// directory Go refuses is never cached.
func TestSessionKey(t *testing.T) {
	run, _ := newRun(t)
	plan := []byte("a session's plan")
	dep := filepath.Join(t.TempDir(), "profile.toml")
	os.WriteFile(dep, []byte("x"), 0o600)
	a := argv("-p", "agent", "--session", "s1")
	t.Setenv("JAIL_STATE_DIR", "/state/one")
	if err := store(run, a, plan, depsOf(t, dep)); err != nil {
		t.Fatal(err)
	}
	if _, ok := load(run, a); !ok {
		t.Error("the same session's run missed")
	}
	if _, ok := load(run, argv("-p", "agent", "--session", "s1", "--session", "s2")); ok {
		t.Error("the last --session is the run's: another session's run hit")
	}
	t.Setenv("JAIL_STATE_DIR", "/state/one/")
	if _, ok := load(run, a); !ok {
		t.Error("the same state directory, spelt otherwise, missed")
	}
	t.Setenv("JAIL_STATE_DIR", "/state/two")
	if _, ok := load(run, a); ok {
		t.Error("another state directory's session hit")
	}
	for _, bad := range [][]string{argv("--session", "../s1"), argv("--session", "")} {
		if err := store(run, bad, plan, depsOf(t, dep)); err == nil {
			t.Errorf("%q: stored", bad)
		}
	}
	t.Setenv("JAIL_STATE_DIR", "relative")
	if err := store(run, a, plan, depsOf(t, dep)); err == nil {
		t.Error("a relative JAIL_STATE_DIR: stored")
	}
}

// TestPlaceKey: what decides where the cache and the state directory are
// (XDG_RUNTIME_DIR, JAIL_STATE_DIR) decides which directories a plan's
// writable binds were checked against: a plan made under one is never
// replayed under another, where its bind could reach the cache.
func TestPlaceKey(t *testing.T) {
	run, _ := newRun(t)
	plan := []byte("a plan")
	dep := filepath.Join(t.TempDir(), "profile.toml")
	os.WriteFile(dep, []byte("x"), 0o600)
	a := argv("-p", "default", "--bind", "/tmp/w/proj:/p")
	os.Unsetenv("XDG_RUNTIME_DIR")
	t.Setenv("JAIL_STATE_DIR", "")
	os.Unsetenv("JAIL_STATE_DIR")
	if err := store(run, a, plan, depsOf(t, dep)); err != nil {
		t.Fatal(err)
	}
	if _, ok := load(run, a); !ok {
		t.Fatal("the same environment missed")
	}
	t.Setenv("XDG_RUNTIME_DIR", "/tmp/w/proj/rt")
	if _, ok := load(run, a); ok {
		t.Error("a plan made with XDG_RUNTIME_DIR unset hit with it set")
	}
	os.Unsetenv("XDG_RUNTIME_DIR")
	t.Setenv("JAIL_STATE_DIR", "/tmp/w/proj/state")
	if _, ok := load(run, a); ok {
		t.Error("a plan made with JAIL_STATE_DIR unset hit with it set")
	}
}

// TestDirDeps: a directory a plan came from holds while it is the same
// directory with the same mode and owner, whatever is made or removed in
// it (the names the plan looked up there are deps of their own); a file
// holds only while its contents are the same.
func TestDirDeps(t *testing.T) {
	run, _ := newRun(t)
	plan := []byte("plan")
	dir := filepath.Join(t.TempDir(), "ws")
	os.Mkdir(dir, 0o700)
	named := filepath.Join(dir, "named")
	a := argv("--workspace", dir)
	if err := store(run, a, plan, depsOf(t, dir, named)); err != nil {
		t.Fatal(err)
	}
	hit := func(want bool, what string) {
		t.Helper()
		if _, ok := load(run, a); ok != want {
			t.Errorf("%s: hit %v, want %v", what, ok, want)
		}
	}
	time.Sleep(10 * time.Millisecond) // times that differ show
	os.WriteFile(filepath.Join(dir, "made"), nil, 0o600)
	os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	hit(true, "files made in the directory")
	os.Remove(filepath.Join(dir, "made"))
	hit(true, "a file removed from it")
	os.WriteFile(named, nil, 0o600)
	hit(false, "a name the plan looked up there made")
	os.Remove(named)
	hit(true, "that name gone again")
	os.Chmod(dir, 0o755)
	hit(false, "the directory's mode changed")
	os.Chmod(dir, 0o700)
	hit(true, "its mode back")
	os.Rename(dir, dir+".old")
	os.Mkdir(dir, 0o700)
	hit(false, "another directory in its place")
}
