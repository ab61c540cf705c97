package main

// jail run (also jail with no command): one command in one fresh jail. Go
// plans the run, stores the plan for the next identical call, and execs the
// runner in this very process.

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/plancache"
	"github.com/jail-sandbox/jail/profiles"
	"github.com/jail-sandbox/jail/sandbox"
	"github.com/jail-sandbox/jail/sessions"
)

const runExample = `Example:
   jail -p agent --workspace "$PWD" -- bash -c 'pytest -q'
   jail -p default --time-limit 30s --status-json /tmp/st.json -- python3 -c 'print(1)'`

// runCommand is `jail run`; started is when jail started, command what
// followed "--".
func runCommand(started time.Time, command []string) *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run CMD in a jail (the default command)",
		UsageText: "jail run [-p PROFILE] [overrides] -- CMD [ARGS...]\n\n" + runExample,
		Flags:     runFlags(),
		Action:    runAction(started, command),
	}
}

// runFlags are run's flags: those that change the profile, where the
// status record goes, and whether the command gets a terminal.
func runFlags() []cli.Flag {
	return append(overrideFlags(),
		&cli.StringFlag{Name: "status-json", Usage: "write the run's status record to `PATH` (or fd:N)"},
		&cli.BoolFlag{Name: "tty", Usage: "run the command on a terminal of the jail's own, relayed to jail's (the default when stdin and stdout are terminals); fails when they are not"},
		&cli.BoolFlag{Name: "no-tty", Usage: "never give the command a terminal: it gets jail's stdin, stdout and stderr as they are"},
	)
}

// ttyMode is the run's tty mode from --tty and --no-tty: auto when
// neither is given, decided when the jail starts (a cached plan serves a
// terminal and a pipe alike).
func ttyMode(c *cli.Context) (jail.TTYMode, error) {
	on, off := c.Bool("tty"), c.Bool("no-tty")
	switch {
	case on && off:
		return 0, &exitStatus{code: exitJail, msg: "--tty and --no-tty: give one of them (neither: a terminal when stdin and stdout are one)"}
	case on:
		return jail.TTYOn, nil
	case off:
		return jail.TTYOff, nil
	}
	return jail.TTYAuto, nil
}

func runAction(started time.Time, command []string) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() > 0 {
			return &exitStatus{code: exitJail, msg: fmt.Sprintf("unexpected %q before --: the command goes after -- (jail -p PROFILE -- CMD...)", c.Args().First())}
		}
		if len(command) == 0 {
			return &exitStatus{code: exitJail, msg: "no command: give it after -- (jail -p PROFILE -- CMD...)"}
		}
		if command[0] == "" {
			return &exitStatus{code: exitJail, msg: "empty command: the program to run after -- is \"\""}
		}
		if _, err := ttyMode(c); err != nil {
			return err
		}
		return run(c, started, command)
	}
}

// run plans the run and execs the runner; it returns only if that fails,
// with the status record written (the runner writes it otherwise).
func run(c *cli.Context, started time.Time, command []string) error {
	statusTo := c.String("status-json")
	r, err := prepare(c, command)
	var plan *jail.Plan
	if err == nil {
		plan, err = r.Plan()
	}
	if err == nil {
		// The runner caches the plan for the next identical invocation,
		// which then runs without starting Go (plancache/store.c).
		err = plan.Exec(os.Args, statusTo, started, deps(r.Profile, plan)) // returns only if it fails
	}
	if statusTo != "" {
		var cfg *jail.Config
		if r != nil {
			cfg = &r.Config
		}
		if f, serr := openStatus(statusTo); serr == nil {
			f.Write(jail.NewStatus(cfg, nil, err).JSON())
			f.Close()
		}
	}
	return err
}

// prepare readies the run as sandbox.Run readies a library caller's, from
// the profile and the flags; with --session, the session's workspace.
func prepare(c *cli.Context, command []string) (*sandbox.Prepared, error) {
	p, o, err := loadProfile(c, c.String("profile"))
	if err != nil {
		return nil, err
	}
	r, err := sandbox.Prepare(sandbox.Profile{Value: p}, o, command, os.Environ())
	if r != nil { // the flags held
		warn(r.Profile)
		r.Config.TTY, _ = ttyMode(c) // checked by runAction
		r.Config.Session = c.String("session")
		if r.Config.Session != "" {
			state, err := sessions.StateDir(os.Getenv, os.Geteuid())
			if err != nil {
				return r, err
			}
			r.Config.SessionDir = sessions.Dir(state, r.Config.Session)
		}
		r.Options.Version = jailVersion()
	}
	return r, err
}

// deps are every host path a run's plan was made from: the profile files
// (and where they were looked for) and what mount resolution met.
func deps(p *profiles.Profile, plan *jail.Plan) plancache.Deps {
	d := plancache.Deps{}
	for path, fi := range p.Files {
		d[path] = fi
	}
	for path, fi := range plan.Deps {
		d[path] = fi
	}
	return d
}

// openStatus opens where the status record goes: a path, or fd:N.
func openStatus(to string) (io.WriteCloser, error) {
	if to == "" {
		return nil, nil
	}
	if n, ok := strings.CutPrefix(to, "fd:"); ok {
		fd, err := strconv.Atoi(n)
		if err != nil || fd < 1 {
			return nil, fmt.Errorf("--status-json %s: not a file descriptor number", to)
		}
		f := os.NewFile(uintptr(fd), to)
		if _, err := f.Stat(); err != nil {
			return nil, fmt.Errorf("--status-json %s: %w", to, err)
		}
		return f, nil
	}
	// O_NOFOLLOW: a symlink planted where the record goes (in a
	// workspace, say) must not make jail write through it.
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--status-json: %w", err)
	}
	return f, nil
}
