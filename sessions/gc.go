package sessions

// gc: removing the sessions unused for a while, and saying what happened
// to each (the audit log keeps it: jail sessions gc --audit-log).

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// GCResult is what one collection did: the sessions it removed, those it
// left because a call of theirs ran, and those it could not remove.
type GCResult struct {
	Removed []string
	Skipped []string
	Failed  []GCFailure
}

// GCFailure is a session gc could not remove, and why.
type GCFailure struct {
	ID  string `json:"id"`
	Err string `json:"error"`
}

// GC removes the sessions not used for age, never one in use (a call that
// starts while it runs wins: its session is skipped).
func GC(state string, age time.Duration) (GCResult, error) {
	var r GCResult
	list, err := List(state)
	if err != nil {
		return r, err
	}
	for _, in := range list {
		if time.Since(in.LastUsed) < age {
			continue
		}
		if in.InUse {
			r.Skipped = append(r.Skipped, in.ID)
			continue
		}
		switch err := Remove(state, in.ID); {
		case err == nil:
			r.Removed = append(r.Removed, in.ID)
		case errors.Is(err, ErrInUse):
			r.Skipped = append(r.Skipped, in.ID)
		case errors.Is(err, ErrNoSession):
			// removed meanwhile by another rm or gc
		default:
			r.Failed = append(r.Failed, GCFailure{ID: in.ID, Err: err.Error()})
		}
	}
	sweepCreating(state)
	return r, nil
}

// sweepCreating removes what a create killed midway left (.creating-*,
// a whole copy of a repository's objects), once it is a day old (its
// mtime: a create paused that long fails cleanly when it goes on); no
// call or list ever sees those.
func sweepCreating(state string) {
	dir := filepath.Join(state, "sessions")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && e.IsDir() && strings.HasPrefix(e.Name(), ".creating-") && time.Since(fi.ModTime()) > 24*time.Hour {
			removeAll(filepath.Join(dir, e.Name()))
		}
	}
}
