package main

import (
	"io"
	"slices"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/jail-sandbox/jail/plancache"
)

// The plan cache reads jail's arguments in C (plancache/args.c), before Go
// starts, to tell an invocation it may replay: that walk must read every
// flag of `jail run` as the CLI does, and leave anything else to the CLI.
// These tests hold the two together at the boundary: the flags come from
// the CLI's own definitions (newApp), the walk runs through cgo.

// runCLI parses args (jail's, without "--" and the command, as main gives
// them to the app) with the CLI's own app, and returns what the run
// command's action saw of flag name.
func runCLI(t *testing.T, args []string, name string) (any, error) {
	t.Helper()
	app := newApp(time.Now(), nil)
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	var got any
	capture := func(c *cli.Context) error {
		got = c.Value(name)
		return nil
	}
	app.Action = capture
	app.Command("run").Action = capture
	err := app.Run(args)
	return got, err
}

// TestCacheWalksRunFlags: every flag `jail run` defines, by each of its
// names, with "run" or without, is read by the cache's walk as the CLI
// reads it: a value after it or after "=", or, for a boolean flag, true
// unless "=" says otherwise. --session too: a session's run is replayed
// (its session opened in C, plancache/session.c), keyed by its workspace.
func TestCacheWalksRunFlags(t *testing.T) {
	app := newApp(time.Now(), nil)
	for _, sub := range [][]string{nil, {"run"}} {
		flags := app.Flags
		if sub != nil {
			flags = app.Command("run").Flags
		}
		for _, f := range flags {
			if f == cli.HelpFlag { // the CLI's own: prints help, never a run
				continue
			}
			_, boolean := f.(*cli.BoolFlag)
			// Another flag after it, which a boolean one must not
			// take for its value (the CLI refuses two names of one
			// flag, so not --profile -p).
			next := "hostname"
			if slices.Contains(f.Names(), next) {
				next = "cwd"
			}
			for _, name := range f.Names() {
				dash := "--"
				if len(name) == 1 {
					dash = "-"
				}
				cases := [][]string{{dash + name, "-v4lue"}, {dash + name + "=-v4lue"}, {"-" + name, "-v4lue"}}
				want := "-v4lue"
				if boolean {
					cases, want = [][]string{{dash + name}, {dash + name + "=true"}, {"-" + name}}, "true"
				}
				for _, c := range cases {
					args := append(append(append([]string{"jail"}, sub...), c...), "--"+next, "next")
					argv := append(slices.Clone(args), "--", "true")
					read, ok := plancache.ReadArgs(argv)
					if !ok {
						t.Errorf("%q: the cache's walk does not read it", argv)
						continue
					}
					wantRead := []plancache.Flag{{Name: name, Value: want}, {Name: next, Value: "next"}}
					if !slices.Equal(read, wantRead) {
						t.Errorf("%q: the cache read %q, want %q", argv, read, wantRead)
					}
					got, err := runCLI(t, args, name)
					if err != nil {
						t.Errorf("%q: the CLI: %v", args, err)
						continue
					}
					if s, ok := got.(cli.StringSlice); ok {
						got = s.Value()
					}
					if !cliValue(got, want) {
						t.Errorf("%q: the CLI read %#v, the cache %q", args, got, want)
					}
				}
			}
		}
	}
}

// cliValue says the CLI read the value want.
func cliValue(got any, want string) bool {
	switch g := got.(type) {
	case string:
		return g == want
	case []string:
		return slices.Equal(g, []string{want})
	case bool:
		return g == (want == "true")
	}
	return false
}

// TestCacheLeavesTheRest: what `jail run` does not define (another
// command's flags, help, version, an unknown flag, a subcommand, a word
// before "--", a flag with no value) is never replayed: the CLI reads it.
func TestCacheLeavesTheRest(t *testing.T) {
	app := newApp(time.Now(), nil)
	run := map[string]bool{}
	for _, f := range app.Command("run").Flags {
		for _, n := range f.Names() {
			run[n] = true
		}
	}
	others := []string{"help", "h", "version", "v", "no-such-flag"}
	var walk func([]*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				others = append(others, f.Names()...)
			}
			walk(c.Subcommands)
		}
	}
	walk(app.Commands)
	var cases [][]string
	for _, n := range others {
		if !run[n] {
			cases = append(cases, []string{"--" + n, "x"}, []string{"-" + n}, []string{"--" + n + "=x"})
		}
	}
	for _, c := range app.Commands {
		if c.Name != "run" {
			cases = append(cases, []string{c.Name})
		}
	}
	cases = append(cases, []string{"word"}, []string{"-p", "default", "word"}, []string{"-"}, []string{"---p", "x"},
		[]string{"-p"}, []string{"--hostname"}, []string{"run", "run"})
	for _, c := range cases {
		argv := append(append([]string{"jail"}, c...), "--", "true")
		if read, ok := plancache.ReadArgs(argv); ok {
			t.Errorf("%q: the cache would replay it (read %q)", argv, read)
		}
	}
	if _, ok := plancache.ReadArgs([]string{"jail", "-p", "default"}); ok {
		t.Error("no command: the cache would replay it")
	}
}
