package main

// jail sh (also a link named jail-sh): the shell for an agent's bash tool.
// main enters it before the CLI, as its arguments are a shell's, not
// jail's; the command here only gives it a place in the help.

import (
	"fmt"
	"os"
	"syscall"

	"github.com/urfave/cli/v2"
)

// shCommand is `jail sh` in the help.
func shCommand() *cli.Command {
	return &cli.Command{
		Name:      "sh",
		Usage:     "run bash -c CMD in a jail: the shell for an agent's bash tool (also a link named jail-sh)",
		UsageText: "jail sh -c 'COMMAND' [NAME [ARGS...]]\n\nProfile $JAIL_PROFILE (default agent); workspace: session $JAIL_SESSION, else the current directory.",
		Action: func(*cli.Context) error {
			return &exitStatus{code: exitJail, msg: "usage: jail sh -c 'COMMAND'"}
		},
	}
}

// shMain is `jail sh -c CMD [NAME [ARGS...]]` or `jail sh CMD` (also a
// link named jail-sh): a shell for an agent's bash tool. It runs bash -c
// (sh -c when the host has no bash) in the profile $JAIL_PROFILE (default
// agent), with the workspace of session $JAIL_SESSION, or else the current
// directory; stdin, stdout, stderr and the exit status pass through. It
// execs jail itself, so a repeated call replays its cached plan without
// starting Go.
func shMain(args []string) {
	// One argument is the command itself, as a command prefix gets it
	// (Claude Code's CLAUDE_CODE_SHELL_PREFIX passes the command as $1).
	if len(args) == 1 && args[0] != "-c" {
		args = []string{"-c", args[0]}
	}
	if len(args) < 2 || args[0] != "-c" {
		fmt.Fprintln(os.Stderr, "jail: usage: jail sh -c 'COMMAND' [NAME [ARGS...]], or jail sh 'COMMAND' (profile $JAIL_PROFILE, session $JAIL_SESSION)")
		os.Exit(exitJail)
	}
	profile := os.Getenv("JAIL_PROFILE")
	if profile == "" {
		profile = "agent"
	}
	argv := []string{"jail", "-p", profile}
	if id := os.Getenv("JAIL_SESSION"); id != "" {
		argv = append(argv, "--session", id)
	} else {
		cwd, err := os.Getwd()
		if err != nil {
			fmt.Fprintln(os.Stderr, "jail: sh: the current directory:", err)
			os.Exit(exitJail)
		}
		argv = append(argv, "--workspace", cwd)
	}
	shell := "sh"
	if _, err := os.Stat("/usr/bin/bash"); err == nil {
		shell = "bash"
	} else if _, err := os.Stat("/bin/bash"); err == nil {
		shell = "bash"
	}
	// "--" before the command: one starting with "-" is a command, not
	// the shell's option.
	argv = append(append(argv, "--", shell, "-c", "--"), args[1:]...)
	err := syscall.Exec("/proc/self/exe", argv, os.Environ())
	fmt.Fprintln(os.Stderr, "jail: sh:", err)
	os.Exit(exitJail)
}
