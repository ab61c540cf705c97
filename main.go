// Command jail runs one command in one fresh, throw-away Linux sandbox:
//
//	jail -p agent --workspace "$PWD" -- bash -c 'make test'
//
// This file is the router: the ways into the binary that Go dispatches, the
// CLI's commands (one file each, cmd_*.go) and jail's exit statuses. The
// flow of a run is profiles (what to build) → sandbox.Prepare (the run, as
// a library caller's) → jail (plan, run, report).

// A short-lived launcher has no use for the runtime's cgroup-aware
// GOMAXPROCS, which rereads cgroup files every second; these are also the
// defaults of go.mod's go version, stated so a bump does not change them.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/jail-sandbox/jail/profiles"
)

// Exit statuses of jail's own: the command's status passes through
// otherwise (128+N for signal N).
const (
	exitJail       = 125 // jail failed: bad profile, flag or host; the command did not run
	exitNoExec     = 126 // the command exists but cannot be executed
	exitNotFound   = 127 // the command does not exist in the jail
	exitCheckFails = 1   // jail check found a requirement missing
)

// version is set by the Makefile (-X main.version=...); empty, `jail
// version` says what Go stamped (cmd_version.go).
var version string

// main is entered only when the C entry (jail/entry.c, before the Go
// runtime starts, with the table of every way into the binary: a cached
// plan replayed, the runner, the init stage, the user-namespace helper, the
// proxy) has left the process to Go. The proxy stage is served before main,
// by package jail's init (jail/proxystage.go), so that a program linking
// the runner through sandbox serves it too. Go's own modes here come
// first, then the CLI.
func main() {
	if filepath.Base(os.Args[0]) == "jail-sh" {
		shMain(os.Args[1:])
	}
	if len(os.Args) > 1 && os.Args[1] == "sh" {
		shMain(os.Args[2:])
	}
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		exit(versionFlag(os.Args[2:]))
		return
	}
	started := time.Now()
	args, command := splitCommand(os.Args)
	app := newApp(started, command)
	exit(app.Run(flagsFirst(app, args)))
}

// newApp is the CLI: with no command, jail runs one (jail run).
func newApp(started time.Time, command []string) *cli.App {
	app := &cli.App{
		Name:      "jail",
		Usage:     "run one command in one fresh, throw-away Linux sandbox",
		UsageText: "jail [-p PROFILE] [overrides] -- CMD [ARGS...]\n\n" + runExample,
		Version:   version,
		// Flags and the command are parsed by hand around "--"; slice
		// flags keep commas (--env A=b,c).
		DisableSliceFlagSeparator: true,
		HideVersion:               true,
		Flags:                     runFlags(),
		Action:                    runAction(started, command),
		ExitErrHandler:            func(*cli.Context, error) {},
		Commands: []*cli.Command{
			runCommand(started, command),
			profilesCommand(),
			profileCommand(),
			seccompCommand(),
			sessionsCommand(),
			auditCommand(),
			shCommand(),
			checkCommand(),
			setupCommand(),
			versionCommand(),
		},
	}
	// Setup first: it adds the help commands, which must say a bad flag
	// in one line too (Run does not set up again).
	app.Setup()
	oneLineUsageErrors(app.Commands)
	app.OnUsageError = usageError
	return app
}

// usageError is a bad flag as one line, as every other refusal is: not the
// whole help (an agent reads what jail-sh prints).
func usageError(c *cli.Context, err error, _ bool) error {
	return fmt.Errorf("%w (jail %s--help lists the flags)", err, helpPath(c))
}

// helpPath is the command a context is for, as typed before --help
// ("profile show "), empty for jail's own flags.
func helpPath(c *cli.Context) string {
	var names []string
	for _, l := range c.Lineage() {
		// The app's own context carries a root command named as the app.
		if l.Command != nil && l.Command.Name != "" && l.Command.Name != c.App.Name {
			names = append([]string{l.Command.Name}, names...)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return strings.Join(names, " ") + " "
}

// oneLineUsageErrors gives every command, and theirs, usageError, and a
// command made of commands commandsOnly: an unknown one is one line too.
func oneLineUsageErrors(cmds []*cli.Command) {
	for _, c := range cmds {
		c.OnUsageError = usageError
		if len(c.Subcommands) > 0 && c.Action == nil {
			c.Action = commandsOnly
		}
		oneLineUsageErrors(c.Subcommands)
	}
}

// commandsOnly is a command made of commands given none of them: its help
// when given nothing, else one line naming the word (urfave/cli's own
// would say "No help topic").
func commandsOnly(c *cli.Context) error {
	if !c.Args().Present() {
		return cli.ShowSubcommandHelp(c)
	}
	return fmt.Errorf("unknown command %q (jail %s--help lists the commands)", c.Args().First(), helpPath(c))
}

// exitStatus ends jail with a status and, if msg is set, one line on stderr.
type exitStatus struct {
	code int
	msg  string
}

func (e *exitStatus) Error() string { return e.msg }

// exit ends jail as err says: 0 for none, an exitStatus's own status, and
// exitJail with the error's one line for any other.
func exit(err error) {
	if err == nil {
		return
	}
	var ex *exitStatus
	if errors.As(err, &ex) {
		if ex.msg != "" {
			fmt.Fprintln(os.Stderr, "jail:", shSpelling(ex.msg))
		}
		os.Exit(ex.code)
	}
	fmt.Fprintln(os.Stderr, "jail:", shSpelling(oneLine(err)))
	os.Exit(exitJail)
}

// oneLine keeps an error to the one line the user gets; a profile with
// several problems is the exception, one line each.
func oneLine(err error) string {
	var perrs profiles.Errors
	if errors.As(err, &perrs) {
		return err.Error()
	}
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}
