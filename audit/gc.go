package audit

// Session collections in the audit log: jail sessions gc --audit-log
// appends one line of kind "sessions_gc" saying what it removed, what it
// left because a call of it ran, and what it could not remove.

import (
	"encoding/json"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/sessions"
)

// GCRecord is one collection's line.
type GCRecord struct {
	Time        time.Time            `json:"time"`
	Kind        string               `json:"kind"` // KindSessionsGC
	CallerUID   uint32               `json:"caller_uid"`
	JailVersion string               `json:"jail_version"`
	OlderThan   string               `json:"older_than"` // the age a session had to be unused for
	Removed     []string             `json:"removed"`
	Skipped     []string             `json:"skipped"` // in use
	Failed      []sessions.GCFailure `json:"failed"`
}

// NewGCRecord is the line for what gc did, now.
func NewGCRecord(r sessions.GCResult, olderThan time.Duration, version string) GCRecord {
	g := GCRecord{Time: time.Now().UTC().Truncate(time.Millisecond), Kind: KindSessionsGC, CallerUID: uint32(os.Getuid()),
		JailVersion: version, OlderThan: olderThan.String(), Removed: r.Removed, Skipped: r.Skipped, Failed: r.Failed}
	for _, s := range []*[]string{&g.Removed, &g.Skipped} {
		if *s == nil {
			*s = []string{}
		}
	}
	if g.Failed == nil {
		g.Failed = []sessions.GCFailure{}
	}
	return g
}

// Append adds the line to the log at path, as the runner appends a run's
// (jail/report.c's audit_open): never through a symlink, only to a regular
// file of the caller's own, made 0600 if missing; one write, so lines of
// runs ending at once never interleave.
func Append(path string, g GCRecord) error {
	line, err := json.Marshal(g)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("audit log %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("audit log %s: %w", path, err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.Mode().IsRegular() || !ok || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("audit log %s: not a regular file of this user's", path)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("audit log %s: %w", path, err)
	}
	return nil
}
