package main

// jail sh (also a link named jail-sh): the shell for an agent's bash tool.
// main enters it before the CLI, as its arguments are a shell's, not
// jail's; the command here only gives it a place in the help.

// jail_cli tells the C entry (jail/entry.c) that this binary is jail's
// CLI, whose jail-sh it rewrites and replays before Go starts; a program
// that links package jail through sandbox does not define it.

// const int jail_cli = 1;
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/jail-sandbox/jail/jail"
)

// shCommand is `jail sh` in the help.
func shCommand() *cli.Command {
	return &cli.Command{
		Name:      "sh",
		Usage:     "run bash -c CMD in a jail: the shell for an agent's bash tool (also a link named jail-sh)",
		UsageText: shUsage("jail sh"),
		Action: func(*cli.Context) error {
			return &exitStatus{code: exitJail, msg: "usage: jail sh -c 'COMMAND'"}
		},
	}
}

// shMain is `jail sh -c CMD [NAME [ARGS...]]` or `jail sh CMD` (also a
// link named jail-sh): a shell for an agent's bash tool. It runs bash -c
// (sh -c when the host has no bash) in the profile $JAIL_PROFILE (default
// agent), with the workspace of session $JAIL_SESSION, or else the current
// directory, and the run flags of $JAIL_ALLOW and $JAIL_FLAGS (shFlags);
// stdin, stdout, stderr and the exit status pass through. It execs jail
// itself, so a repeated call replays its cached plan. The C entry makes
// the same rewrite before Go starts (plancache/sh.c) and replays it there:
// this runs only for what C leaves to Go (a refusal to say, a setting it
// does not read exactly as this does, a plan not cached yet is C's too).
func shMain(args []string) {
	shell := "sh"
	if _, err := os.Stat("/usr/bin/bash"); err == nil {
		shell = "bash"
	} else if _, err := os.Stat("/bin/bash"); err == nil {
		shell = "bash"
	}
	argv, err := shArgv(args, os.Getenv, os.Getwd, shell)
	if errors.Is(err, errShHelp) {
		name := "jail sh"
		if filepath.Base(os.Args[0]) == "jail-sh" {
			name = "jail-sh"
		}
		fmt.Println("usage: " + shUsage(name))
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "jail:", err)
		os.Exit(exitJail)
	}
	// The run's messages are a jail-sh user's (shSpelling).
	os.Setenv(jail.ShEnv, "1")
	err = syscall.Exec("/proc/self/exe", argv, os.Environ())
	fmt.Fprintln(os.Stderr, "jail: sh:", err)
	os.Exit(exitJail)
}

// shSpelling is a message of jail's as its user reads it: in a run jail sh
// made (jail.ShEnv set, by shMain or by C's rewrite in jail/entry.c), with
// each run flag it suggests spelled as jail-sh takes it (JAIL_ALLOW=HOST,
// JAIL_FLAGS="--limits-mode best-effort"), as the runner's own lines are.
func shSpelling(msg string) string {
	if os.Getenv(jail.ShEnv) == "" {
		return msg
	}
	return jail.ShHints(msg)
}

// shUsage is jail sh's help, for name ("jail sh" or "jail-sh").
func shUsage(name string) string {
	return name + " -c 'COMMAND' [NAME [ARGS...]], or " + name + " 'COMMAND'\n\n" +
		"Runs bash -c COMMAND (sh where the host has no bash) in a jail; stdin, stdout, stderr and the exit status pass through.\n" +
		"Its settings come from the environment:\n" +
		"   JAIL_PROFILE  the profile (default agent)\n" +
		"   JAIL_SESSION  the session whose workspace is /workspace (unset: the current directory is)\n" +
		"   JAIL_ALLOW    the hosts the jail may reach, separated by spaces or commas (\"pypi.org github.com:22\")\n" +
		"   JAIL_FLAGS    other run flags with their values, separated by spaces (\"--memory 2G --time-limit 10m\"; jail --help lists them)"
}

// errShHelp is jail sh asked for its help (-h, --help), which no shell
// command is: shMain prints it.
var errShHelp = errors.New("sh: help")

// shArgv is the jail run that jail sh's args stand for, with the settings
// getenv gives, the working directory getwd finds (without a session) and
// shell ("bash" or "sh"). Its error is jail's one line, or errShHelp.
func shArgv(args []string, getenv func(string) string, getwd func() (string, error), shell string) ([]string, error) {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		return nil, errShHelp
	}
	// One argument is the command itself, as a command prefix gets it
	// (Claude Code's CLAUDE_CODE_SHELL_PREFIX passes the command as $1).
	if len(args) == 1 && args[0] != "-c" {
		args = []string{"-c", args[0]}
	}
	if len(args) < 2 || args[0] != "-c" {
		return nil, errors.New("usage: jail sh -c 'COMMAND' [NAME [ARGS...]], or jail sh 'COMMAND' (profile $JAIL_PROFILE, session $JAIL_SESSION)")
	}
	profile := getenv("JAIL_PROFILE")
	if profile == "" {
		profile = "agent"
	}
	// "run": JAIL_FLAGS holds run flags, and a word there that names a
	// command (version, help) must not replace the run.
	argv := []string{"jail", "run", "-p", profile}
	if id := getenv("JAIL_SESSION"); id != "" {
		argv = append(argv, "--session", id)
	} else {
		cwd, err := getwd()
		if err != nil {
			return nil, fmt.Errorf("sh: the current directory: %w", err)
		}
		argv = append(argv, "--workspace", cwd)
	}
	flags, err := shFlags(getenv("JAIL_ALLOW"), getenv("JAIL_FLAGS"))
	if err != nil {
		return nil, fmt.Errorf("sh: %w", err)
	}
	argv = append(argv, flags...)
	// "--" before the command: one starting with "-" is a command, not
	// the shell's option.
	return append(append(argv, "--", shell, "-c", "--"), args[1:]...), nil
}

// shFlags are the run flags a caller gives jail sh without a profile file:
// JAIL_ALLOW, hosts separated by spaces or commas (--allow each), and
// JAIL_FLAGS, run flags and their values separated by spaces. jail reads
// them as it reads its own command line, with the same messages for a bad
// one; and they stay run flags only, so a repeated call still replays its
// cached plan.
func shFlags(allow, flags string) ([]string, error) {
	var argv []string
	for _, h := range strings.FieldsFunc(allow, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		argv = append(argv, "--allow", h)
	}
	words := strings.Fields(flags)
	if len(words) > 0 && !strings.HasPrefix(words[0], "-") {
		return nil, fmt.Errorf("JAIL_FLAGS %q: starts with %q, not a flag", flags, words[0])
	}
	for _, w := range words {
		name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if w == "--" || w == "-" || strings.HasPrefix(w, "-") && (name == "h" || name == "help") {
			return nil, fmt.Errorf("JAIL_FLAGS %q: %q is not a run flag (the command is jail sh's)", flags, w)
		}
	}
	return append(argv, words...), nil
}
