package sessions

// Making a session up front (jail sessions create): empty, or a clone of
// a repository. The session is built under a temporary name and renamed
// into place (never replacing one), so no call of it, and no list, rm or
// gc, ever meets it half made.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// ErrExists: a session of that id exists already.
var ErrExists = errors.New("exists already")

// Source is what a session's repository is made from.
type Source struct {
	Repo   Repo
	Base   string // the commit the branch starts at
	Branch string // the session's branch
}

// Create makes session id, which must not exist yet, its workspace owned
// by uid and gid (the host ids of profile, which its calls use, as Open
// would make it): empty, or with src the clone Clone makes, its metadata
// recorded beside the workspace.
func Create(state, id string, uid, gid int, profile string, src *Source) error {
	if err := Check(id); err != nil {
		return err
	}
	if err := safeState(state); err != nil {
		return err
	}
	dir := filepath.Join(state, "sessions")
	if err := privateDir(dir); err != nil {
		return err
	}
	exists := func() error {
		return fmt.Errorf("session %s %w; fix: choose another id, or remove it first (jail sessions rm %s)", id, ErrExists, id)
	}
	if _, err := os.Lstat(Dir(state, id)); err == nil {
		return exists()
	}
	tmp, err := os.MkdirTemp(dir, ".creating-")
	if err != nil {
		return fmt.Errorf("session %s: %w", id, err)
	}
	done := false
	defer func() {
		if !done {
			removeAll(tmp)
		}
	}()
	ws := filepath.Join(tmp, "workspace")
	if err := os.Mkdir(ws, 0o700); err != nil {
		return fmt.Errorf("session %s: %w", id, err)
	}
	if src != nil {
		if err := Clone(ws, *src); err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
		m := Meta{Repository: src.Repo.Top, Branch: src.Branch, Base: src.Base, Profile: profile, Created: time.Now().UTC().Truncate(time.Second)}
		if err := writeMeta(tmp, m); err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
	}
	// No jail has seen the tree yet: walking it by path is safe.
	if uid != os.Geteuid() || gid != os.Getegid() {
		err := filepath.WalkDir(ws, func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, uid, gid)
		})
		if err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
	}
	err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, Dir(state, id), unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY) {
		return exists()
	} else if err != nil {
		return fmt.Errorf("session %s: %w", id, err)
	}
	done = true
	return nil
}

// removeAll removes dir, opening up first the read-only directories a
// jail may have made (WalkDir does not follow links).
func removeAll(dir string) error {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
