package sessions

// A session's metadata: where its repository came from. Kept in the
// session's directory, beside the workspace and out of the jail's reach,
// so what diff and export compare against (the base commit, the branch)
// is what create recorded, never what a call of the session wrote.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Meta is a session made from a git repository.
type Meta struct {
	Repository string    `json:"repository"` // the repository's top directory (or a bare one's), absolute
	Branch     string    `json:"branch"`     // the session's branch, in the session and (exported) in Repository
	Base       string    `json:"base"`       // the commit the branch started from
	Profile    string    `json:"profile"`    // the profile whose host ids own the workspace; diff and export run in it
	Created    time.Time `json:"created"`
}

const metaFile = "meta.json"

// writeMeta writes m into session directory dir (still private, being
// made).
func writeMeta(dir string, m Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, metaFile), append(b, '\n'), 0o600)
}

// ReadMeta reads session id's metadata: ok false for a session made
// without a repository.
func ReadMeta(state, id string) (m Meta, ok bool, err error) {
	if err := Check(id); err != nil {
		return m, false, err
	}
	return readMeta(Dir(state, id))
}

func readMeta(dir string) (m Meta, ok bool, err error) {
	f, err := os.OpenFile(filepath.Join(dir, metaFile), os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return m, false, nil
	} else if err != nil {
		return m, false, fmt.Errorf("session metadata: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<16))
	if err != nil {
		return m, false, fmt.Errorf("session metadata %s: %w", f.Name(), err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("session metadata %s: %w", f.Name(), err)
	}
	return m, true, nil
}
