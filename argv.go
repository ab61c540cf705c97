package main

// Argv rewriting ahead of urfave/cli: the command after "--" is cut off
// before any parsing, and the positional words of the commands that take
// them before their flags are moved after the flags.

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// splitCommand cuts argv at the first "--": what follows is the command,
// never parsed as flags or subcommands (urfave/cli would take a command
// named "profiles" for ours).
func splitCommand(argv []string) (args, command []string) {
	for i := 1; i < len(argv); i++ {
		if argv[i] == "--" {
			return argv[:i], argv[i+1:]
		}
	}
	return argv, nil
}

// flagsFirst lets `jail profile show NAME --flag v` (and `jail seccomp
// export NAME --format pfc`) work: urfave/cli stops at the first positional
// argument, so the positional words are moved after the flags. Which flags
// take a value is what the command's own flags say.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 3 || !(args[1] == "profile" && args[2] == "show" || args[1] == "seccomp" && args[2] == "export") {
		return args
	}
	cmd := subcommand(app.Command(args[1]), args[2])
	if cmd == nil {
		return args
	}
	boolean := booleanFlags(append(slices.Clip(cmd.Flags), cli.HelpFlag))
	flags, names := []string{}, []string{}
	for i := 3; i < len(args); i++ {
		a := args[i]
		switch {
		case !strings.HasPrefix(a, "-") || a == "-":
			names = append(names, a)
		case strings.Contains(a, "=") || boolean[a] || i+1 == len(args):
			flags = append(flags, a)
		default:
			flags = append(flags, a, args[i+1])
			i++
		}
	}
	return append(append(args[:3:3], flags...), names...)
}

// subcommand is parent's subcommand named name, or nil.
func subcommand(parent *cli.Command, name string) *cli.Command {
	if parent == nil {
		return nil
	}
	for _, c := range parent.Subcommands {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// booleanFlags are the spellings, -name and --name, of the flags that take
// no value (a value only after "=").
func booleanFlags(flags []cli.Flag) map[string]bool {
	boolean := map[string]bool{}
	for _, f := range flags {
		if v, ok := f.(interface{ TakesValue() bool }); ok && !v.TakesValue() {
			for _, name := range f.Names() {
				boolean["-"+name], boolean["--"+name] = true, true
			}
		}
	}
	return boolean
}
