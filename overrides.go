package main

// The flags that change a profile, shared by jail run and jail profile
// show: their definitions, and reading them (with --session, the session's
// workspace) into the profile's typed Overrides.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/profiles"
	"github.com/jail-sandbox/jail/sessions"
)

// overrideFlags are the flags that change a profile, for run and for
// profile show (which prints the effective policy with the same flags).
func overrideFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, Value: "default", Usage: "profile `NAME` or path to a .toml file (jail profiles lists them)"},
		&cli.StringFlag{Name: "workspace", Usage: "bind host `DIR` read-write at /workspace"},
		&cli.StringFlag{Name: "audit-log", Usage: "append one JSON line per run to `FILE`"},
		&cli.StringFlag{Name: "secrets", Usage: "put the keys of `FILE` (TOML or KEY=value lines, mode 0600, yours) into the command's environment"},
		&cli.StringFlag{Name: "session", Usage: "use session `ID`'s workspace (kept across calls; made on first use)"},
		&cli.StringSliceFlag{Name: "bind", KeepSpace: true, Usage: "bind host `SRC[:DST]` read-write (repeatable; a ':' in a path is \\:)"},
		&cli.StringSliceFlag{Name: "ro-bind", KeepSpace: true, Usage: "bind host `SRC[:DST]` read-only (repeatable; a ':' in a path is \\:)"},
		&cli.StringSliceFlag{Name: "tmpfs", KeepSpace: true, Usage: "mount a fresh tmpfs at `DST[:SIZE[:MODE]]` (repeatable)"},
		&cli.StringSliceFlag{Name: "env", KeepSpace: true, Usage: "set `K=V` in the command's environment (repeatable)"},
		&cli.StringSliceFlag{Name: "keep-env", Usage: "pass host variable `K` through if set (repeatable)"},
		&cli.StringFlag{Name: "cwd", Usage: "working `DIR` inside the jail"},
		&cli.StringFlag{Name: "hostname", Usage: "the jail's host`NAME`"},
		&cli.StringFlag{Name: "time-limit", Usage: "kill the whole jail after `DURATION` (e.g. 30s, 10m; 0 for none)"},
		&cli.StringFlag{Name: "memory", Usage: "memory limit of the whole jail, `SIZE` (e.g. 512M, 512MiB, 1.5G, unlimited: every unit 1024-based); no swap"},
		&cli.StringFlag{Name: "pids", Usage: "at most `N` processes and threads in the jail at once (or unlimited)"},
		&cli.StringFlag{Name: "cpu", Usage: "CPU quota of the whole jail in `CORES` (e.g. 0.5, 2; or unlimited)"},
		&cli.StringFlag{Name: "max-output", Usage: "cap each of stdout and stderr at `BYTES` (e.g. 1M, 1MiB); the rest is dropped and counted"},
		&cli.StringFlag{Name: "disk", Usage: "let the jail write at most `SIZE` to its writable binds (e.g. 4G, unlimited); past it the run is killed"},
		&cli.StringFlag{Name: "network", Usage: "`MODE` none (only loopback), allowlist (jail's proxy to --allow hosts) or host"},
		&cli.StringSliceFlag{Name: "allow", Usage: "let the jail reach `HOST[:PORT]` (or *.DOMAIN) through jail's proxy (repeatable; implies --network allowlist)"},
		&cli.StringSliceFlag{Name: "credential", Usage: "bind secret `ENV@HOST`: the jail gets a placeholder in ENV, and only requests to HOST carry the real value from the secrets file (repeatable)"},
		&cli.StringSliceFlag{Name: "pin-host", Usage: "resolve `NAME=ADDR` without DNS, for the proxy (repeatable)"},
		&cli.StringFlag{Name: "limits-mode", Usage: "`MODE` enforce (fail when cgroups are out of reach) or best-effort (rlimit stand-ins)"},
		&cli.StringFlag{Name: "seccomp", Usage: "seccomp `POLICY` to run under (jail seccomp list), or none"},
		&cli.BoolFlag{Name: "seccomp-audit", Usage: "let through what the policy denies, reporting each call in the status record"},
	}
}

// loadProfile loads the named profile and reads the flags into the
// changes to make to it. With --session the workspace is the session's
// (made on first use), and the session stays locked (shared) until the run
// ends: the lock's fd is inherited by the runner.
func loadProfile(c *cli.Context, name string) (*profiles.Profile, profiles.Overrides, error) {
	if err := emptyFlags(c); err != nil {
		return nil, profiles.Overrides{}, err
	}
	p, err := profiles.Load(name, profiles.Options{SearchPath: profiles.DefaultSearchPath(os.Environ())})
	if err != nil {
		return nil, profiles.Overrides{}, err
	}
	workspace := c.String("workspace")
	if id := c.String("session"); id != "" {
		if workspace != "" {
			return nil, profiles.Overrides{}, errors.New("--session and --workspace: a session has its own workspace")
		}
		var dir string
		if workspace, dir, err = openSession(p, id); err != nil {
			return nil, profiles.Overrides{}, err
		}
		// A session may name its own secrets: STATE/sessions/ID/secrets,
		// when there (a profile's or --secrets wins).
		if f := filepath.Join(dir, "secrets"); p.Secrets.File == "" && c.String("secrets") == "" {
			if _, err := os.Lstat(f); err == nil {
				p.Secrets.File = f
			}
		}
	}
	cwd, _ := os.Getwd()
	return p, profiles.Flags{
		Overrides: profiles.Overrides{
			Workspace:    workspace,
			Binds:        c.StringSlice("bind"),
			ROBinds:      c.StringSlice("ro-bind"),
			Tmpfs:        c.StringSlice("tmpfs"),
			Env:          c.StringSlice("env"),
			KeepEnv:      c.StringSlice("keep-env"),
			Cwd:          c.String("cwd"),
			Hostname:     c.String("hostname"),
			LimitsMode:   profiles.LimitsMode(c.String("limits-mode")),
			Network:      profiles.NetworkMode(c.String("network")),
			Allow:        c.StringSlice("allow"),
			PinHosts:     c.StringSlice("pin-host"),
			Credentials:  c.StringSlice("credential"),
			AuditLog:     c.String("audit-log"),
			Secrets:      c.String("secrets"),
			Seccomp:      c.String("seccomp"),
			SeccompAudit: c.Bool("seccomp-audit"),
			Cwd0:         cwd,
		},
		TimeLimit: c.String("time-limit"),
		Memory:    c.String("memory"),
		Pids:      c.String("pids"),
		CPU:       c.String("cpu"),
		MaxOutput: c.String("max-output"),
		Disk:      c.String("disk"),
	}.Parse(), nil
}

// warn prints what importing the profile's seccomp policy (a Docker/OCI
// profile) skipped or changed.
func warn(p *profiles.Profile) {
	for _, w := range p.Seccomp.Warnings {
		fmt.Fprintln(os.Stderr, "jail: warning:", w)
	}
}

// emptyFlags refuses a flag given an empty value (--workspace "",
// --session "", --status-json ""): an empty variable in a caller's script
// is a mistake, never "the current directory" or "none".
func emptyFlags(c *cli.Context) error {
	for _, name := range c.FlagNames() {
		if v, ok := c.Value(name).(string); ok && v == "" {
			dash := "--"
			if len(name) == 1 {
				dash = "-"
			}
			return fmt.Errorf("%s%s \"\": must not be empty", dash, name)
		}
	}
	return nil
}

// openSession opens session id's workspace for this run, owned by the
// jail's host ids, and keeps its lock held across the exec into the runner.
func openSession(p *profiles.Profile, id string) (string, string, error) {
	state, err := sessions.StateDir(os.Getenv, os.Geteuid())
	if err != nil {
		return "", "", err
	}
	uid, gid := os.Geteuid(), os.Getegid()
	if uid == 0 {
		uid, gid = int(p.User.HostUID), int(p.User.HostGID)
	}
	s, lock, err := sessions.Open(state, id, uid, gid)
	if err != nil {
		return "", "", err
	}
	// A duplicate, not close-on-exec and out of the garbage collector's
	// reach: the runner holds the lock until jail ends (the init stage
	// closes every fd it inherits).
	_, err = unix.Dup(int(lock.Fd()))
	lock.Close()
	if err != nil {
		return "", "", fmt.Errorf("session %s: %w", id, err)
	}
	return s.Workspace(), s.Dir, nil
}
