// Package sandbox runs jails from a Go program, without the jail CLI and
// without a process start of the caller's own: a resident worker calls
// Run for each command. The program must be built as jail is (cgo, and
// statically with libseccomp for a binary that moves between hosts): it
// links jail's runner, which runs when the program executes itself again.
package sandbox

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	"jail/jail"
	"jail/plancache"
	"jail/profiles"
	"jail/secrets"
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
	// Overrides change the profile for this run as the CLI's flags do
	// (Workspace, Binds, TimeLimit, Memory, Network, ...).
	Overrides profiles.Overrides
}

// Run runs argv in a fresh jail of the profile and waits for it; the
// status record says how it ended (exit code, verdicts, usage). The error
// is jail's own: a bad profile, or a jail that could not be built (then
// the Status says why too). Cancelling ctx ends the jail (SIGTERM to the
// command, SIGKILL 2 s later) and returns ctx's error, with the record
// when there is one.
func Run(ctx context.Context, profile Profile, argv []string, opts Options) (*Status, error) {
	p := profile.Value
	if p == nil {
		name := profile.Name
		if profile.File != "" {
			name = profile.File
		}
		if name == "" {
			return nil, errors.New("sandbox: no profile: give a Name, a File or a Value")
		}
		var err error
		if p, err = profiles.Load(name, profiles.Options{SearchPath: profiles.DefaultSearchPath(os.Environ())}); err != nil {
			return nil, err
		}
	}
	// A copy: the caller's Value serves other runs, perhaps at once.
	p = p.Clone()
	if err := p.Apply(opts.Overrides); err != nil {
		return nil, err
	}
	cfg, err := p.Config(argv, os.Environ())
	if err != nil {
		return nil, err
	}
	if p.Secrets.File != "" {
		if cfg.Env, cfg.SecretKeys, err = secrets.Env(p.Secrets.File, cfg.Env); err != nil {
			return nil, err
		}
	}
	cfg.ProfileHash = p.Hash()
	version := "sandbox"
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = "sandbox " + bi.Main.Version
	}
	// As the CLI plans: no writable bind may reach jail's own state.
	return jail.RunStatus(ctx, cfg, jail.PlanOptions{
		Protected:    []string{plancache.StateDir()},
		SeccompCache: filepath.Join(plancache.StateDir(), "seccomp"),
		Version:      version,
	}, jail.Stdio{Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr})
}
