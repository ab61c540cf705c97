package sessions_test

// A session is opened by Go (Open, for a run Go plans) or by C before Go
// starts (plancache/session.c, for a run replayed from the plan cache).
// These tests hold the two together through cgo: C goes on only where Open
// succeeds without making anything, leaves everything as it found it where
// it hands the session to Go, and both place a session where StateDir and
// Check say.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plancache"
	"github.com/jail-sandbox/jail/sessions"
)

// TestCheckBothSides: C takes exactly the ids Check takes.
func TestCheckBothSides(t *testing.T) {
	ids := []string{"a", "alpha", "A-b_c.d", "0", "x.", "a..b", strings.Repeat("x", 128), strings.Repeat("x", 129),
		"", ".", "..", ".hidden", "-rf", "../beta", "a/b", "a b", "a\tb", "é", "a\xff", "a$b", "a:b", "a=b", "_", "a,b"}
	for _, id := range ids {
		if c, g := plancache.SessionIDOK(id), sessions.Check(id) == nil; c != g {
			t.Errorf("id %q: C takes it %v, Go %v", id, c, g)
		}
	}
}

func FuzzSessionID(f *testing.F) {
	for _, s := range []string{"a", "-x", ".x", "a/b", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if strings.IndexByte(id, 0) >= 0 {
			return // no C string, no argument
		}
		if c, g := plancache.SessionIDOK(id), sessions.Check(id) == nil; c != g {
			t.Errorf("id %q: C takes it %v, Go %v", id, c, g)
		}
	})
}

// TestStateDirBothSides: C finds the state directory where StateDir does,
// and leaves to Go what StateDir refuses.
func TestStateDirBothSides(t *testing.T) {
	for _, tc := range []struct {
		state, home string
		euid        int
	}{
		{"", "/home/u", 1000}, {"", "/home/u/", 1000}, {"", "/home//u/./x/..", 1000}, {"", "/", 1000},
		{"", "", 1000}, {"", "home/u", 1000}, {"", "", 0}, {"", "/root", 0},
		{"/s", "", 1000}, {"/s/", "/h", 0}, {"//s/../t/./", "", 1000}, {"/..", "", 1000}, {"s", "/h", 1000},
		{"./s", "/h", 0}, {"/a/b/../../c", "/h", 1000},
	} {
		getenv := func(k string) string {
			return map[string]string{"JAIL_STATE_DIR": tc.state, "HOME": tc.home}[k]
		}
		g, gerr := sessions.StateDir(getenv, tc.euid)
		c, ok := plancache.SessionState(tc.state, tc.home, tc.euid)
		if ok != (gerr == nil) || ok && c != g {
			t.Errorf("JAIL_STATE_DIR=%q HOME=%q euid %d: C %q %v, Go %q %v", tc.state, tc.home, tc.euid, c, ok, g, gerr)
		}
	}
}

// FuzzClean: C cleans a rooted path as filepath.Clean does.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"/", "//", "/a/../..", "/a/./b/", "/.../a", "/a/..b/../c", "/..a/b/..."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if !strings.HasPrefix(p, "/") || strings.IndexByte(p, 0) >= 0 {
			return
		}
		if c, ok := plancache.CleanPath(p); !ok || c != filepath.Clean(p) {
			t.Errorf("%q: C %q %v, Go %q", p, c, ok, filepath.Clean(p))
		}
	})
}

// TestWorkspaceBothSides: the workspace C keys a session's plan with is
// the one Open gives the run.
func TestWorkspaceBothSides(t *testing.T) {
	for _, state := range []string{"/", "/var/x", "/var//x/./y/../"} {
		t.Setenv("JAIL_STATE_DIR", state)
		dir, err := sessions.StateDir(os.Getenv, os.Geteuid())
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"alpha", "a.b", "-x", "..", "a/b", ""} {
			c, ok := plancache.SessionWorkspace(id)
			want := sessions.Session{ID: id, Dir: filepath.Join(dir, "sessions", id)}.Workspace()
			if ok != (sessions.Check(id) == nil) || ok && c != want {
				t.Errorf("JAIL_STATE_DIR=%q id %q: C %q %v, Go %q", state, id, c, ok, want)
			}
		}
	}
}

// hostIDs are the ids a session's workspace belongs to in these tests: the
// caller's, or for root an unprivileged pair, as a jail's host ids are.
func hostIDs() (int, int) {
	if os.Geteuid() == 0 {
		return 1000, 1000
	}
	return os.Geteuid(), os.Getegid()
}

const id = "s1"

// A fixture is a state directory in some shape, made below base; state is
// what JAIL_STATE_DIR names.
type fixture struct {
	name string
	make func(t *testing.T, base string) (state string)
	root bool // only root can make it (another's files)
	// What Open does with it: goErr, a pattern of its error, or "" for
	// success; made, whether it makes anything (C hands it over then).
	goErr string
	made  bool
	// secrets: the session has its own secrets file, which a replayed
	// run cannot have.
	secrets bool
}

// session makes a whole session with Open, as a first call does, and
// returns the state directory.
func session(t *testing.T, base string) string {
	state := filepath.Join(base, "state")
	uid, gid := hostIDs()
	_, lock, err := sessions.Open(state, id, uid, gid)
	if err != nil {
		t.Fatal(err)
	}
	lock.Close()
	return state
}

// then makes a session, then changes it.
func then(change func(t *testing.T, dir string)) func(*testing.T, string) string {
	return func(t *testing.T, base string) string {
		state := session(t, base)
		change(t, filepath.Join(state, "sessions", id))
		return state
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func fixtures() []fixture {
	other := 1001
	return []fixture{
		{name: "a session made before", make: session},
		{name: "nothing yet", make: func(t *testing.T, base string) string { return filepath.Join(base, "state") }, made: true},
		{name: "no session yet", make: func(t *testing.T, base string) string {
			state := session(t, base)
			must(t, os.RemoveAll(filepath.Join(state, "sessions", id)))
			return state
		}, made: true},
		{name: "no lock", make: then(func(t *testing.T, dir string) { must(t, os.Remove(filepath.Join(dir, "lock"))) }), made: true},
		{name: "no workspace", make: then(func(t *testing.T, dir string) { must(t, os.Remove(filepath.Join(dir, "workspace"))) }), made: true},
		{name: "state through a symlink", make: func(t *testing.T, base string) string {
			session(t, base)
			must(t, os.Symlink("state", filepath.Join(base, "link")))
			return filepath.Join(base, "link")
		}, goErr: `^sessions: .*/link must be reached without symlinks$`},
		{name: "a parent of state a symlink", make: func(t *testing.T, base string) string {
			session(t, base)
			must(t, os.Symlink(".", filepath.Join(base, "up")))
			return filepath.Join(base, "up", "state")
		}, goErr: `^sessions: .*/up/state must be reached without symlinks$`},
		{name: "state writable by its group", make: func(t *testing.T, base string) string {
			state := session(t, base)
			must(t, os.Chmod(state, 0o770))
			return state
		}, goErr: `^sessions: .*/state must be uid [0-9]+'s and writable by no one else$`},
		{name: "state another's", root: true, make: func(t *testing.T, base string) string {
			state := session(t, base)
			must(t, os.Chown(state, other, other))
			return state
		}, goErr: `^sessions: .*/state must be uid 0's and writable by no one else$`},
		{name: "sessions 0755", make: func(t *testing.T, base string) string {
			state := session(t, base)
			must(t, os.Chmod(filepath.Join(state, "sessions"), 0o755))
			return state
		}, goErr: `^sessions: .*/state/sessions must be a directory of uid [0-9]+, mode 0700$`},
		{name: "sessions a symlink", make: func(t *testing.T, base string) string {
			state := session(t, base)
			must(t, os.Rename(filepath.Join(state, "sessions"), filepath.Join(state, "real")))
			must(t, os.Symlink("real", filepath.Join(state, "sessions")))
			return state
		}, goErr: `^sessions: .*/state/sessions must be a directory of uid [0-9]+, mode 0700$`},
		{name: "session dir a symlink", make: then(func(t *testing.T, dir string) {
			must(t, os.Rename(dir, dir+".real"))
			must(t, os.Symlink(id+".real", dir))
		}), goErr: `^sessions: .*/sessions/s1 must be a directory of uid [0-9]+, mode 0700$`},
		{name: "session dir 0750", make: then(func(t *testing.T, dir string) { must(t, os.Chmod(dir, 0o750)) }),
			goErr: `^sessions: .*/sessions/s1 must be a directory of uid [0-9]+, mode 0700$`},
		{name: "session dir another's", root: true, make: then(func(t *testing.T, dir string) { must(t, os.Chown(dir, other, other)) }),
			goErr: `^sessions: .*/sessions/s1 must be a directory of uid 0, mode 0700$`},
		{name: "workspace a symlink", make: then(func(t *testing.T, dir string) {
			ws := filepath.Join(dir, "workspace")
			must(t, os.Rename(ws, ws+".real"))
			must(t, os.Symlink("workspace.real", ws))
		}), goErr: `^session s1: .*/sessions/s1/workspace is not a directory of uid [0-9]+$`},
		{name: "workspace a file", make: then(func(t *testing.T, dir string) {
			ws := filepath.Join(dir, "workspace")
			must(t, os.Remove(ws))
			must(t, os.WriteFile(ws, nil, 0o600))
		}), goErr: `^session s1: .*/sessions/s1/workspace is not a directory of uid [0-9]+$`},
		{name: "workspace another uid's", root: true, make: then(func(t *testing.T, dir string) {
			must(t, os.Chown(filepath.Join(dir, "workspace"), other, other))
		}), goErr: `^session s1: .*/sessions/s1/workspace is not a directory of uid 1000$`},
		{name: "lock a symlink", make: then(func(t *testing.T, dir string) {
			lock := filepath.Join(dir, "lock")
			must(t, os.Rename(lock, lock+".real"))
			must(t, os.Symlink("lock.real", lock))
		}), goErr: `^session s1: open .*/sessions/s1/lock: too many levels of symbolic links$`},
		{name: "lock a directory", make: then(func(t *testing.T, dir string) {
			lock := filepath.Join(dir, "lock")
			must(t, os.Remove(lock))
			must(t, os.Mkdir(lock, 0o700))
		}), goErr: `^session s1: open .*/sessions/s1/lock: is a directory$`},
		// Open does not read them (overrides.go does, and Go plans a run
		// with secrets each time): C hands such a session to Go.
		{name: "secrets", secrets: true, make: then(func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "secrets"), []byte("K=v\n"), 0o600))
		})},
		{name: "secrets a dangling symlink", secrets: true, make: then(func(t *testing.T, dir string) {
			must(t, os.Symlink("nowhere", filepath.Join(dir, "secrets")))
		})},
	}
}

// tree is what lies below dir, each path with its type, mode and owner,
// and for the lock its modification time.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		var st unix.Stat_t
		unix.Lstat(p, &st)
		line := fmt.Sprintf("%s %o %d:%d", p, st.Mode, st.Uid, st.Gid)
		if d.Name() == "lock" {
			line += fmt.Sprintf(" %d", st.Mtim.Nano())
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestOpenBothSides runs every fixture through C (a replayed run's open)
// and, made anew, through Go (Open): C goes on only where Open succeeds
// and makes nothing, and holds the lock then; where it does not, it leaves
// the fixture as it was, for Go to open, make or refuse (with the message
// in goErr).
func TestOpenBothSides(t *testing.T) {
	uid, gid := hostIDs()
	for _, fx := range fixtures() {
		t.Run(fx.name, func(t *testing.T) {
			if fx.root && os.Geteuid() != 0 {
				t.Skip("only root can give a file to another user")
			}
			base := t.TempDir()
			state := fx.make(t, base)
			t.Setenv("JAIL_STATE_DIR", state)
			before := tree(t, base)
			time.Sleep(10 * time.Millisecond) // a touched lock shows
			lock, ok := plancache.SessionOpen(id, uid)
			after := tree(t, base)
			wantC := fx.goErr == "" && !fx.made && !fx.secrets
			if ok != wantC {
				t.Fatalf("C opened it: %v, want %v", ok, wantC)
			}
			if ok {
				defer unix.Close(lock)
				if err := sessions.Remove(state, id); !errors.Is(err, sessions.ErrInUse) {
					t.Errorf("rm while C holds the lock: %v, want in use", err)
				}
				if before == after {
					t.Error("C did not mark the session used (the lock's time)")
				}
			} else if before != after {
				t.Errorf("C handed the session to Go but changed it:\n%s\nwas\n%s", after, before)
			}

			// Go, on the same fixture made anew.
			base = t.TempDir()
			state = fx.make(t, base)
			before = tree(t, base)
			_, f, err := sessions.Open(state, id, uid, gid)
			switch {
			case fx.goErr == "" && err != nil:
				t.Fatalf("Go: %v", err)
			case fx.goErr != "" && (err == nil || !regexp.MustCompile(fx.goErr).MatchString(err.Error())):
				t.Fatalf("Go: %v, want %s", err, fx.goErr)
			}
			if f != nil {
				f.Close()
			}
			made := strings.Count(tree(t, base), "\n") != strings.Count(before, "\n")
			if err == nil && made != fx.made {
				t.Errorf("Go made something: %v, want %v", made, fx.made)
			}
		})
	}
}

// holdLock takes session id's lock exclusively, as rm and gc do.
func holdLock(t *testing.T, state string) *os.File {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(state, "sessions", id, "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	must(t, unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB))
	return f
}

// openers are the two ways a run opens its session: ok, or handed to Go.
var openers = []struct {
	name string
	open func(state string) (ok bool, close func(), err error)
}{
	{"C", func(string) (bool, func(), error) {
		uid, _ := hostIDs()
		fd, ok := plancache.SessionOpen(id, uid)
		return ok, func() { unix.Close(fd) }, nil
	}},
	{"Go", func(state string) (bool, func(), error) {
		uid, gid := hostIDs()
		_, f, err := sessions.Open(state, id, uid, gid)
		if err != nil {
			return false, nil, err
		}
		return true, func() { f.Close() }, nil
	}},
}

// TestOpenWaitsForRm: while rm or gc holds a session's lock, a run's open
// waits, on either side, and goes on once it is released.
func TestOpenWaitsForRm(t *testing.T) {
	for _, o := range openers {
		t.Run(o.name, func(t *testing.T) {
			state := session(t, t.TempDir())
			t.Setenv("JAIL_STATE_DIR", state)
			held := holdLock(t, state)
			done := make(chan bool)
			go func() {
				ok, closeLock, err := o.open(state)
				if ok {
					closeLock()
				}
				done <- ok && err == nil
			}()
			select {
			case <-done:
				t.Fatal("opened while rm held the lock")
			case <-time.After(200 * time.Millisecond):
			}
			held.Close()
			if !<-done {
				t.Error("not opened once rm let go")
			}
		})
	}
}

// TestOpenAfterRm: a run that waited for the lock of a session rm removed
// meanwhile does not use the removed one: Go makes the session anew, as a
// later call would, and C hands it to Go (which then does), having made
// nothing.
func TestOpenAfterRm(t *testing.T) {
	for _, o := range openers {
		t.Run(o.name, func(t *testing.T) {
			state := session(t, t.TempDir())
			t.Setenv("JAIL_STATE_DIR", state)
			dir := filepath.Join(state, "sessions", id)
			must(t, os.WriteFile(filepath.Join(dir, "workspace", "old"), nil, 0o600))
			held := holdLock(t, state)
			done := make(chan bool)
			go func() {
				ok, closeLock, err := o.open(state)
				if err != nil {
					t.Error(err)
				}
				if ok {
					closeLock()
				}
				done <- ok
			}()
			time.Sleep(100 * time.Millisecond)
			// What Remove does under its lock: out of the way first.
			must(t, os.Rename(dir, filepath.Join(state, "sessions", ".removing-test")))
			held.Close()
			ok := <-done
			_, err := os.Stat(filepath.Join(dir, "workspace"))
			switch o.name {
			case "C":
				if ok || err == nil {
					t.Errorf("C: opened %v, made the session %v; want it handed to Go with nothing made", ok, err == nil)
				}
			case "Go":
				_, old := os.Stat(filepath.Join(dir, "workspace", "old"))
				if !ok || err != nil || old == nil {
					t.Errorf("Go: opened %v, workspace %v, the removed one's file there %v; want a new session", ok, err, old == nil)
				}
			}
		})
	}
}

// TestRemoveLocksAMissingLock: a session whose lock is not made yet (a
// call between its directory and its lock) is removed under a lock made
// for it, which that call then waits for; a lock that is a symlink is
// refused, never followed.
func TestRemoveLocksAMissingLock(t *testing.T) {
	state := session(t, t.TempDir())
	dir := filepath.Join(state, "sessions", id)
	must(t, os.Remove(filepath.Join(dir, "lock")))
	must(t, sessions.Remove(state, id))
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("session without a lock not removed: %v", err)
	}
	state = session(t, t.TempDir())
	dir = filepath.Join(state, "sessions", id)
	target := filepath.Join(t.TempDir(), "elsewhere")
	must(t, os.Remove(filepath.Join(dir, "lock")))
	must(t, os.Symlink(target, filepath.Join(dir, "lock")))
	if err := sessions.Remove(state, id); err == nil {
		t.Error("removed through a symlinked lock")
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the symlink's target was made: %v", err)
	}
}

// TestRemoveMissing: removing a session that is not there says which, and
// where it was looked for, with the state directory made or not; it makes
// nothing.
func TestRemoveMissing(t *testing.T) {
	for _, state := range []string{filepath.Join(t.TempDir(), "state"), session(t, t.TempDir())} {
		err := sessions.Remove(state, "nosuch")
		want := `session "nosuch": no such session in ` + filepath.Join(state, "sessions") + ` (jail sessions list shows them)`
		if err == nil || err.Error() != want || !errors.Is(err, sessions.ErrNoSession) {
			t.Errorf("Remove(%s, nosuch) = %v, want %q", state, err, want)
		}
	}
	state := filepath.Join(t.TempDir(), "state")
	sessions.Remove(state, "nosuch")
	if _, err := os.Lstat(state); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("rm of a missing session made the state directory: %v", err)
	}
}
