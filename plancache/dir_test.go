package plancache

// Where the cache is (dir.c), for callers the tests lay out by hand: the
// place chosen, why each one before it was passed over, and what no
// writable bind may reach. The round trip through each place, as a real
// unprivileged caller, is testscripts/cli/check_cache.txtar's.

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// layout is one caller's host, made under a temporary root: a /run with
// or without user/ and user/UID, a runtime directory for XDG_RUNTIME_DIR,
// a HOME with or without its state directory.
type layout struct {
	t    *testing.T
	root string
	uid  int
}

// newLayout lays hosts out for uid: as root, one that is not root's own
// (every level must be the caller's, and root may make it so); else the
// test's own.
func newLayout(t *testing.T) layout {
	uid := os.Geteuid()
	if uid == 0 {
		uid = 4242
	}
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	return layout{t: t, root: root, uid: uid}
}

// dir makes path (under root; U: the caller's uid) and its missing parents, the last one the
// caller's with mode, the parents root's (or the test's) 0755.
func (l layout) dir(path string, mode os.FileMode) string {
	l.t.Helper()
	p := filepath.Join(l.root, withUID(path, strconv.Itoa(l.uid)))
	if err := os.MkdirAll(p, 0o755); err != nil {
		l.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		l.t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(p, l.uid, l.uid); err != nil {
			l.t.Fatal(err)
		}
	}
	return p
}

func (l layout) path(p string) string { return filepath.Join(l.root, p) }

// env is the caller in this layout: /run is root/run; the variables are
// paths under root when they start with '/' there, taken as they are
// otherwise ("" for unset).
func (l layout) env(xdg, state, home string) Env {
	abs := func(v string) string {
		if filepath.IsAbs(v) {
			return l.path(v)
		}
		return v
	}
	return Env{Run: l.path("run"), EUID: l.uid, XDGRuntimeDir: abs(xdg), StateDir: abs(state), Home: abs(home)}
}

func TestWhere(t *testing.T) {
	type want struct {
		at      At
		dir     string   // the state directory in use, under root ("" for none)
		why     [3]Why   // for the places passed over
		guarded []string // under root
		levels  [2]Why   // StateWhy, PlansWhy
	}
	enoent := Why(syscall.ENOENT)
	for _, tc := range []struct {
		what             string
		lay              func(l layout)
		xdg, state, home string
		want             want
	}{
		{
			what: "the login manager's runtime directory",
			lay:  func(l layout) { l.dir("run/user/U", 0o700) },
			xdg:  "/xdg", home: "/home",
			want: want{at: AtRun, dir: "run/user/U/jail", guarded: []string{"run/user/U/jail", "xdg/jail", "home/.local/state/jail/cache"}, levels: [2]Why{enoent, enoent}},
		},
		{
			what: "the runtime directory with the cache in it",
			lay: func(l layout) {
				l.dir("run/user/U", 0o700)
				l.dir("run/user/U/jail", 0o700)
				l.dir("run/user/U/jail/plans", 0o700)
			},
			want: want{at: AtRun, dir: "run/user/U/jail", guarded: []string{"run/user/U/jail"}},
		},
		{
			what: "a state directory others may enter: no cache, and no other place",
			lay: func(l layout) {
				l.dir("run/user/U", 0o700)
				l.dir("run/user/U/jail", 0o755)
				l.dir("xdg", 0o700)
			},
			xdg:  "/xdg",
			want: want{at: AtRun, dir: "run/user/U/jail", guarded: []string{"run/user/U/jail", "xdg/jail"}, levels: [2]Why{NotPrivate, enoent}},
		},
		{
			what: "plans others may read",
			lay: func(l layout) {
				l.dir("run/user/U", 0o700)
				l.dir("run/user/U/jail", 0o700)
				l.dir("run/user/U/jail/plans", 0o740)
			},
			want: want{at: AtRun, dir: "run/user/U/jail", guarded: []string{"run/user/U/jail"}, levels: [2]Why{0, NotPrivate}},
		},
		{
			what: "no runtime directory, no XDG_RUNTIME_DIR, on a login manager's host",
			lay:  func(l layout) { l.dir("run/user", 0o755); l.dir("home/.local/state/jail", 0o700) },
			home: "/home",
			want: want{at: None, why: [3]Why{enoent, Unset, NotHere}, guarded: []string{"run/user/U/jail", "home/.local/state/jail/cache"}},
		},
		{
			what: "XDG_RUNTIME_DIR where the runtime directory is missing",
			lay:  func(l layout) { l.dir("run/user", 0o755); l.dir("xdg", 0o700) },
			xdg:  "/xdg", home: "/home",
			want: want{at: AtXDG, dir: "xdg/jail", why: [3]Why{enoent}, guarded: []string{"run/user/U/jail", "xdg/jail", "home/.local/state/jail/cache"}, levels: [2]Why{enoent, enoent}},
		},
		{
			// A directory the caller (or a jail of its, through a
			// writable bind) could have made is not trusted.
			what: "XDG_RUNTIME_DIR in a directory the caller may write: the state directory",
			lay:  func(l layout) { l.dir("run", 0o755); l.dir("open", 0o777); l.dir("open/xdg", 0o700) },
			xdg:  "/open/xdg", home: "/home",
			want: want{at: AtState, dir: "home/.local/state/jail/cache", why: [3]Why{enoent, ParentOpen}, guarded: []string{"run/user/U/jail", "open/xdg/jail", "home/.local/state/jail/cache"}, levels: [2]Why{enoent, enoent}},
		},
		{
			what: "a runtime directory others may enter: XDG_RUNTIME_DIR",
			lay:  func(l layout) { l.dir("run/user/U", 0o755); l.dir("xdg", 0o700) },
			xdg:  "/xdg/",
			want: want{at: AtXDG, dir: "xdg/jail", why: [3]Why{NotPrivate}, guarded: []string{"run/user/U/jail", "xdg/jail"}, levels: [2]Why{enoent, enoent}},
		},
		{
			what: "XDG_RUNTIME_DIR others may enter",
			lay:  func(l layout) { l.dir("run/user", 0o755); l.dir("xdg", 0o711) },
			xdg:  "/xdg",
			want: want{at: None, why: [3]Why{enoent, NotPrivate, NotHere}, guarded: []string{"run/user/U/jail", "xdg/jail"}},
		},
		{
			what: "XDG_RUNTIME_DIR missing",
			lay:  func(l layout) { l.dir("run/user", 0o755) },
			xdg:  "/xdg",
			want: want{at: None, why: [3]Why{enoent, enoent, NotHere}, guarded: []string{"run/user/U/jail", "xdg/jail"}},
		},
		{
			what: "XDG_RUNTIME_DIR reached through a symlink",
			lay: func(l layout) {
				l.dir("run/user", 0o755)
				l.dir("real/xdg", 0o700)
				if err := os.Symlink("real", l.path("link")); err != nil {
					t.Fatal(err)
				}
			},
			xdg:  "/link/xdg",
			want: want{at: None, why: [3]Why{enoent, Why(syscall.ELOOP), NotHere}, guarded: []string{"run/user/U/jail", "link/xdg/jail"}},
		},
		{
			what: "XDG_RUNTIME_DIR relative",
			lay:  func(l layout) { l.dir("run/user", 0o755) },
			xdg:  "xdg",
			want: want{at: None, why: [3]Why{enoent, Relative, NotHere}, guarded: []string{"run/user/U/jail"}},
		},
		{
			what: "XDG_RUNTIME_DIR is the runtime directory",
			lay:  func(l layout) { l.dir("run/user", 0o755) },
			xdg:  "/run/user/U",
			want: want{at: None, why: [3]Why{enoent, Same, NotHere}, guarded: []string{"run/user/U/jail"}},
		},
		{
			what: "no /run/user (a container): the state directory",
			lay:  func(l layout) { l.dir("run", 0o755); l.dir("home/.local/state/jail", 0o755) },
			home: "/home",
			want: want{at: AtState, dir: "home/.local/state/jail/cache", why: [3]Why{enoent, Unset}, guarded: []string{"run/user/U/jail", "home/.local/state/jail/cache"}, levels: [2]Why{enoent, enoent}},
		},
		{
			what:  "no /run at all: JAIL_STATE_DIR",
			lay:   func(l layout) { l.dir("state", 0o700) },
			state: "/state", home: "/home",
			want: want{at: AtState, dir: "state/cache", why: [3]Why{enoent, Unset}, guarded: []string{"run/user/U/jail", "state/cache"}, levels: [2]Why{enoent, enoent}},
		},
		{
			what: "a container with XDG_RUNTIME_DIR: it, and the state directory guarded too",
			lay:  func(l layout) { l.dir("run", 0o755); l.dir("xdg", 0o700); l.dir("home/.local/state/jail", 0o700) },
			xdg:  "/xdg", home: "/home",
			want: want{at: AtXDG, dir: "xdg/jail", why: [3]Why{enoent}, guarded: []string{"run/user/U/jail", "xdg/jail", "home/.local/state/jail/cache"}, levels: [2]Why{enoent, enoent}},
		},
		{
			what:  "a state directory others may write",
			lay:   func(l layout) { l.dir("run", 0o755); l.dir("state", 0o775) },
			state: "/state",
			want:  want{at: None, why: [3]Why{enoent, Unset, NotPrivate}, guarded: []string{"run/user/U/jail", "state/cache"}},
		},
		{
			what: "a state directory not made yet, where the store may make it",
			lay:  func(l layout) { l.dir("run", 0o755) },
			home: "/home",
			want: want{at: AtState, dir: "home/.local/state/jail/cache", why: [3]Why{enoent, Unset}, guarded: []string{"run/user/U/jail", "home/.local/state/jail/cache"}, levels: [2]Why{enoent, enoent}},
		},
		{
			what: "no HOME and no JAIL_STATE_DIR",
			lay:  func(l layout) { l.dir("run", 0o755) },
			home: "relative",
			want: want{at: None, why: [3]Why{enoent, Unset, Unset}, guarded: []string{"run/user/U/jail"}},
		},
	} {
		t.Run(tc.what, func(t *testing.T) {
			l := newLayout(t)
			tc.lay(l)
			u := strconv.Itoa(l.uid)
			sub := func(p string) string { return l.path(withUID(p, u)) }
			p := Where(l.env(withUID(tc.xdg, u), tc.state, tc.home))
			w := tc.want
			if p.At != w.at {
				t.Fatalf("at %d, want %d (%+v)", p.At, w.at, p)
			}
			if w.at != None && p.Dirs[p.At] != sub(w.dir) {
				t.Errorf("state directory %q, want %q", p.Dirs[p.At], sub(w.dir))
			}
			passed := 3
			if w.at != None {
				passed = int(w.at)
			}
			for i := 0; i < passed; i++ {
				if p.Why[i] != w.why[i] {
					t.Errorf("place %d passed over for %d, want %d", i, p.Why[i], w.why[i])
				}
			}
			var guarded []string
			for _, g := range w.guarded {
				guarded = append(guarded, sub(g))
			}
			if got := p.Guarded(); !slices.Equal(got, guarded) {
				t.Errorf("guarded %q, want %q", got, guarded)
			}
			if w.at != None && (p.StateWhy != w.levels[0] || p.PlansWhy != w.levels[1]) {
				t.Errorf("state directory, plans: %d %d, want %d %d", p.StateWhy, p.PlansWhy, w.levels[0], w.levels[1])
			}
		})
	}
}

// withUID puts the caller's uid for each "U" element of path p.
func withUID(p, uid string) string {
	parts := strings.Split(p, "/")
	for i, e := range parts {
		if e == "U" {
			parts[i] = uid
		}
	}
	return strings.Join(parts, "/")
}

// TestWhereRoot: root's cache is /run/jail, and nowhere else, whatever its
// environment says.
func TestWhereRoot(t *testing.T) {
	run := t.TempDir()
	xdg := t.TempDir()
	p := Where(Env{Run: run, EUID: 0, XDGRuntimeDir: xdg, Home: "/root"})
	if p.At != AtRun || p.Dir() != filepath.Join(run, "jail") || p.Why[AtXDG] != NotHere || p.Why[AtState] != NotHere {
		t.Errorf("root: %+v", p)
	}
	if g := p.Guarded(); !slices.Equal(g, []string{filepath.Join(run, "jail")}) {
		t.Errorf("root's guarded: %q", g)
	}
	p = Where(Env{Run: filepath.Join(run, "missing"), EUID: 0, XDGRuntimeDir: xdg, Home: "/root"})
	if p.At != None || p.Why[AtRun] != Why(syscall.ENOENT) || p.Why[AtXDG] != NotHere {
		t.Errorf("root without /run: %+v", p)
	}
}
