// Package sessions keeps an agent session's workspace across its tool
// calls: STATE/sessions/ID/workspace, made on first use (0700), mounted at
// /workspace by every call of that session and by no other. A call holds a
// shared lock on the session while it runs; gc and rm take it exclusively,
// so they never remove a session in use.
package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// StateDir is where jail keeps sessions: $JAIL_STATE_DIR, else
// /var/lib/jail for root and ~/.local/state/jail for others.
func StateDir(getenv func(string) string, euid int) (string, error) {
	if d := getenv("JAIL_STATE_DIR"); d != "" {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("JAIL_STATE_DIR %q: want an absolute path", d)
		}
		return filepath.Clean(d), nil
	}
	if euid == 0 {
		return "/var/lib/jail", nil
	}
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		return "", errors.New("HOME is not an absolute path: set JAIL_STATE_DIR")
	}
	return filepath.Join(home, ".local/state/jail"), nil
}

// Check wants a session id of letters, digits, '-', '_' and '.', at most
// 128, and not "." or "..": it names a directory.
func Check(id string) error {
	if id == "" || len(id) > 128 || id == "." || id == ".." || id[0] == '-' || id[0] == '.' ||
		strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != "" {
		return fmt.Errorf("session id %q: want 1 to 128 letters, digits, '-', '_' or '.' (and not \".\" or \"..\")", id)
	}
	return nil
}

// Session is one session's directory.
type Session struct {
	ID, Dir string
}

// Dir is session id's directory in the state directory state.
func Dir(state, id string) string { return filepath.Join(state, "sessions", id) }

// Workspace is the directory mounted at /workspace.
func (s Session) Workspace() string { return filepath.Join(s.Dir, "workspace") }

func (s Session) lockPath() string { return filepath.Join(s.Dir, "lock") }

// Open makes the session on first use, with its workspace owned by uid
// and gid (the jail's host ids: the caller, or for root the unprivileged
// ids the jail runs as), and takes a shared lock, returned as an open file
// that must stay open (and be inherited by the runner) while the call
// runs. Each use marks the session used now. A replayed run opens its
// session in C instead (plancache/session.c), which goes on only where
// this would succeed without making anything, and hands the rest here.
func Open(state, id string, uid, gid int) (Session, *os.File, error) {
	if err := Check(id); err != nil {
		return Session{}, nil, err
	}
	s := Session{ID: id, Dir: Dir(state, id)}
	if err := safeState(state); err != nil {
		return s, nil, err
	}
	if err := privateDir(filepath.Join(state, "sessions")); err != nil {
		return s, nil, err
	}
	// rm renames a session away under its exclusive lock before removing
	// it: a call that waited for the lock of a session removed meanwhile
	// starts again, and makes the session anew, as a call that came after
	// the rm would.
	for tries := 0; ; tries++ {
		lock, err := s.open(uid, gid)
		if err != nil || lock != nil {
			return s, lock, err
		}
		if tries == 3 {
			return s, nil, fmt.Errorf("session %s: removed while it opened; try again", id)
		}
	}
}

// open makes the session's directory and workspace when missing, and takes
// the lock; a nil lock and error when the session was removed while it
// waited for the lock.
func (s Session) open(uid, gid int) (*os.File, error) {
	if err := os.Mkdir(s.Dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("session %s: %w", s.ID, err)
	}
	if err := ownedDir(s.Dir, os.Geteuid()); err != nil {
		return nil, err
	}
	ws := s.Workspace()
	if err := os.Mkdir(ws, 0o700); err == nil {
		if err := os.Chown(ws, uid, gid); err != nil {
			return nil, fmt.Errorf("session %s: %w", s.ID, err)
		}
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("session %s: %w", s.ID, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(ws, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != uid {
		return nil, fmt.Errorf("session %s: %s is not a directory of uid %d", s.ID, ws, uid)
	}
	f, err := os.OpenFile(s.lockPath(), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", s.ID, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
		f.Close()
		return nil, fmt.Errorf("session %s: lock: %w", s.ID, err)
	}
	// Still the session's once held?
	var held, now unix.Stat_t
	if unix.Fstat(int(f.Fd()), &held) != nil || unix.Lstat(s.lockPath(), &now) != nil || held.Ino != now.Ino || held.Nlink == 0 {
		f.Close()
		return nil, nil
	}
	t := time.Now()
	os.Chtimes(s.lockPath(), t, t)
	return f, nil
}

// safeState refuses a state directory reached through a symlink, or one
// another user owns or may write: jail removes what is under it.
func safeState(state string) error {
	if err := os.MkdirAll(state, 0o700); err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	real, err := filepath.EvalSymlinks(state)
	if err != nil || real != filepath.Clean(state) {
		return fmt.Errorf("sessions: %s must be reached without symlinks", state)
	}
	var st unix.Stat_t
	if err := unix.Lstat(state, &st); err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	if int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		return fmt.Errorf("sessions: %s must be uid %d's and writable by no one else", state, os.Geteuid())
	}
	return nil
}

// privateDir makes dir (and its parents) 0700 when missing, and checks it
// is the caller's and no one else's.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	return ownedDir(dir, os.Geteuid())
}

func ownedDir(dir string, uid int) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != uid || st.Mode&0o077 != 0 {
		return fmt.Errorf("sessions: %s must be a directory of uid %d, mode 0700", dir, uid)
	}
	return nil
}

// Info is a session as list shows it.
type Info struct {
	ID       string
	Size     int64 // bytes in its workspace
	LastUsed time.Time
	InUse    bool
	// Made from a repository (create --git): where from, and its branch
	// and base commit; empty otherwise.
	Repository, Branch, Base string
}

// List reads every session under state.
func List(state string) ([]Info, error) {
	dir := filepath.Join(state, "sessions")
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err := safeState(state); err != nil {
		return nil, err
	}
	if err := ownedDir(dir, os.Geteuid()); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, e := range ents {
		if !e.IsDir() || Check(e.Name()) != nil {
			continue
		}
		s := Session{ID: e.Name(), Dir: filepath.Join(dir, e.Name())}
		in := Info{ID: s.ID}
		if fi, err := os.Stat(s.lockPath()); err == nil {
			in.LastUsed = fi.ModTime()
		} else if fi, err := e.Info(); err == nil {
			in.LastUsed = fi.ModTime()
		}
		filepath.WalkDir(s.Workspace(), func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					in.Size += fi.Size()
				}
			}
			return nil
		})
		in.InUse = inUse(s)
		if m, ok, err := readMeta(s.Dir); err == nil && ok {
			in.Repository, in.Branch, in.Base = m.Repository, m.Branch, m.Base
		}
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func inUse(s Session) bool {
	f, err := os.Open(s.lockPath())
	if err != nil {
		return false
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return true
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false
}

// ErrInUse: a call of the session is running.
var ErrInUse = errors.New("in use")

// ErrNoSession: there is no session of that id to remove.
var ErrNoSession = errors.New("no such session")

// Remove deletes a session, unless a call of it is running: it holds the
// lock exclusively while it removes, so no call starts meanwhile.
func Remove(state, id string) error {
	if err := Check(id); err != nil {
		return err
	}
	s := Session{ID: id, Dir: filepath.Join(state, "sessions", id)}
	// Named, rather than "no such file": a mistyped id, or one gc took.
	if _, err := os.Lstat(s.Dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("session %q: %w in %s (jail sessions list shows them)", id, ErrNoSession, filepath.Dir(s.Dir))
	}
	if err := safeState(state); err != nil {
		return err
	}
	if err := ownedDir(filepath.Join(state, "sessions"), os.Geteuid()); err != nil {
		return err
	}
	if err := ownedDir(s.Dir, os.Geteuid()); err != nil {
		return err
	}
	// Made when missing (a session Open has made the directory of but
	// not yet its lock): removing it unlocked would pull it from under
	// that call, which now waits for this lock and starts again.
	f, err := os.OpenFile(s.lockPath(), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("session %s: %w", id, fs.ErrNotExist)
	} else if err != nil {
		return err
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return fmt.Errorf("session %s: %w", id, ErrInUse)
	}
	// Out of the way first, under the lock: a call that starts now makes
	// the session anew instead of finding it half removed.
	var rnd [8]byte
	unix.Getrandom(rnd[:], 0)
	trash := filepath.Join(state, "sessions", fmt.Sprintf(".removing-%x", rnd))
	if err := os.Rename(s.Dir, trash); err != nil {
		return fmt.Errorf("session %s: %w", id, err)
	}
	// Files the jail made may be read-only directories.
	return removeAll(trash)
}
