package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/plancache"
)

// JAIL_ALLOW and JAIL_FLAGS become run flags, in order; anything that would
// end jail's flags (and so change the command) is refused.
func TestShFlags(t *testing.T) {
	got, err := shFlags(" api.test, other.test:22\tgit.test ", "--memory 2G --time-limit=10m")
	want := []string{"--allow", "api.test", "--allow", "other.test:22", "--allow", "git.test", "--memory", "2G", "--time-limit=10m"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("shFlags = %q, %v; want %q", got, err, want)
	}
	if got, err := shFlags("", ""); err != nil || len(got) != 0 {
		t.Errorf("empty: %q, %v", got, err)
	}
	for _, bad := range []string{"--memory 2G -- rm -rf /", "rm -rf /", "--memory 2G -", "--help", "--memory 2G -h", "--help=true"} {
		if _, err := shFlags("", bad); err == nil || !strings.Contains(err.Error(), "JAIL_FLAGS") {
			t.Errorf("JAIL_FLAGS=%q: %v, want a refusal naming JAIL_FLAGS", bad, err)
		}
	}
}

// jail sh --help (and -h) is jail sh's help, never a command run in a
// jail; -c --help is still a command.
func TestShHelp(t *testing.T) {
	getenv := func(string) string { return "" }
	getwd := func() (string, error) { return "/w", nil }
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}, {"--help", "x"}} {
		if argv, err := shArgv(args, getenv, getwd, "bash"); !errors.Is(err, errShHelp) {
			t.Errorf("shArgv(%q) = %q, %v; want its help", args, argv, err)
		}
		if argv, ok := plancache.ShArgv(args, plancache.ShEnv{Cwd: "/w", Shell: "bash"}); ok {
			t.Errorf("C rewrote %q into %q: help is Go's", args, argv)
		}
	}
	for _, args := range [][]string{{"-c", "--help"}, {"--helpx"}} {
		if _, err := shArgv(args, getenv, getwd, "bash"); err != nil {
			t.Errorf("shArgv(%q): %v; want a run", args, err)
		}
	}
}

// jail-sh's rewrite is made twice: by the C entry, before Go starts, so a
// repeated call replays its plan with no Go at all (plancache/sh.c), and by
// shArgv for what C leaves to Go. These tests run every case through both:
// where C rewrites, it is Go's argv exactly; C leaves to Go only what Go
// refuses, or settings Go reads as Unicode.

// shBothSides checks one case on both sides.
func shBothSides(t *testing.T, args []string, env plancache.ShEnv) {
	t.Helper()
	getenv := func(k string) string {
		return map[string]string{"JAIL_PROFILE": env.Profile, "JAIL_SESSION": env.Session, "JAIL_ALLOW": env.Allow, "JAIL_FLAGS": env.Flags}[k]
	}
	getwd := func() (string, error) { return env.Cwd, nil }
	goArgv, goErr := shArgv(args, getenv, getwd, env.Shell)
	cArgv, ok := plancache.ShArgv(args, env)
	unicode := !isASCII(env.Allow) || !isASCII(env.Flags)
	switch {
	case ok && (goErr != nil || !slices.Equal(cArgv, goArgv)):
		t.Errorf("%q %+v: C %q, Go %q %v", args, env, cArgv, goArgv, goErr)
	case !ok && goErr == nil && !unicode:
		t.Errorf("%q %+v: C left Go %q", args, env, goArgv)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func TestShArgvBothSides(t *testing.T) {
	argss := [][]string{nil, {"-c"}, {"-c", "echo hi"}, {"echo hi"}, {"-x"}, {"-c", "cmd", "name", "a", "b"}, {"-c", ""}, {""},
		{"cmd", "extra"}, {"-c", "-c"}, {"--", "x"}, {"-c", "x y", "--"}, {"-c", "é"}, {"--help"}, {"-h"}, {"-help"},
		{"--help", "x"}, {"-c", "--help"}, {"--helpx"}}
	profiles := []string{"", "agent", "default", "two words", "é"}
	ids := []string{"", "s1", "../x", "é"}
	allows := []string{"", "a.test", " a.test, b.test:22\tc.test ", ",,,", "a\u00a0b", "a\u0085b", "a\v\fb\r\n", "é.test"}
	flagss := []string{"", "--memory 2G", "--time-limit=10m  --cpu 1", "x", "--", "-", "--help", "-h", "--help=true", "-help",
		"---h", "--memory 2G -- id", "--h=1", "\t--cpu\n1\v", "--hostname é", "--memory=2G --status-json /tmp/x", "--version",
		"--helpx", "-hh", "--memory 2G version", "-p x", "--session s2", "--env A=b,c", "--cpu\u00a01", "--h-elp"}
	for _, args := range argss {
		for _, p := range profiles {
			for _, id := range ids {
				for _, a := range allows {
					for _, f := range flagss {
						for _, shell := range []string{"bash", "sh"} {
							shBothSides(t, args, plancache.ShEnv{Profile: p, Session: id, Allow: a, Flags: f, Cwd: "/w d", Shell: shell})
						}
					}
				}
			}
		}
	}
}

func FuzzShArgv(f *testing.F) {
	f.Add("-c\x00echo hi", "agent", "s1", "a.test,b.test", "--memory 2G")
	f.Add("echo hi", "", "", "", "--help")
	f.Add("-c", "", "", " ", "x -- y")
	f.Fuzz(func(t *testing.T, args, profile, id, allow, flags string) {
		for _, s := range []string{profile, id, allow, flags} {
			if strings.IndexByte(s, 0) >= 0 {
				return // no such variable
			}
		}
		var argv []string
		if args != "" {
			argv = strings.Split(args, "\x00")
		}
		shBothSides(t, argv, plancache.ShEnv{Profile: profile, Session: id, Allow: allow, Flags: flags, Cwd: "/w", Shell: "bash"})
	})
}

// TestShGetwdBothSides: without a session the workspace is the working
// directory as os.Getwd says it, $PWD when that names it (the path the
// caller sees, through a symlink too); C finds the same.
func TestShGetwdBothSides(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(real)
	for _, pwd := range []string{"", real, real + "/", real + "/.", filepath.Join(dir, "link"), dir, "real", "/no/such/dir", "/"} {
		t.Setenv("PWD", pwd)
		g, err := os.Getwd()
		c, ok := plancache.Getwd(pwd)
		if !ok || err != nil || c != g {
			t.Errorf("PWD=%q: C %q %v, Go %q %v", pwd, c, ok, g, err)
		}
	}
}
