// Package sandbox runs jails from a Go program, without the jail CLI and
// without a process start of the caller's own: a resident worker calls
// Run for each command. The program must be built as jail is (cgo, and
// statically with libseccomp for a binary that moves between hosts): it
// links jail's runner, which runs when the program executes itself again.
//
// Run is Prepare (the profile, its overrides, the secrets: the same steps
// the jail CLI takes) and then the run, as a child of the caller. The CLI
// is a client of Prepare too: it plans the run and execs the runner in its
// own process.
package sandbox

import (
	"context"
	"io"
	"os"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/profiles"
)

// Status is the run's status record, as --status-json writes it.
type Status = jail.Status

// Profile says which profile a run uses: a built-in or user profile by
// Name, a TOML File, or a Value already loaded (profiles.Load).
type Profile struct {
	Name  string
	File  string
	Value *profiles.Profile
}

// Options are a run's streams and its changes to the profile.
type Options struct {
	Stdin          io.Reader // nil: /dev/null
	Stdout, Stderr io.Writer // nil: /dev/null
	// Overrides change the profile for this run as the CLI's flags do,
	// as typed values (TimeLimit: new(30*time.Second), Memory:
	// new(uint64(512<<20)), Network: profiles.NetworkNone, Binds, ...).
	Overrides profiles.Overrides
}

// Run runs argv in a fresh jail of the profile and waits for it; the
// status record says how it ended (exit code, verdicts, usage). The error
// is jail's own: a bad profile, or a jail that could not be built (then
// the Status says why too). Cancelling ctx ends the jail (SIGTERM to the
// command, SIGKILL 2 s later) and returns ctx's error, with the record
// when there is one.
func Run(ctx context.Context, profile Profile, argv []string, opts Options) (*Status, error) {
	r, err := Prepare(profile, opts.Overrides, argv, os.Environ())
	if err != nil {
		return nil, err
	}
	return jail.RunStatus(ctx, r.Config, r.Options, jail.Stdio{Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr})
}
