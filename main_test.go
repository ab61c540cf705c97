package main

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/urfave/cli/v2"

	"jail/plancache"
)

// TestCacheableFlags keeps the plan cache's list of run flags, in Go and
// in C, equal to the flags `jail run` has: a flag the cache did not know
// would make an invocation uncacheable (harmless), one it knew that Go did
// not would make it read arguments as Go does not (not harmless).
func TestCacheableFlags(t *testing.T) {
	var valued, boolean []string
	for _, f := range runFlags() {
		if _, ok := f.(*cli.BoolFlag); ok {
			boolean = append(boolean, f.Names()...)
		} else {
			valued = append(valued, f.Names()...)
		}
	}
	goValued, goBool := plancache.RunFlags()
	same(t, "plancache.RunFlags valued", goValued, valued)
	same(t, "plancache.RunFlags boolean", goBool, boolean)
	src, err := os.ReadFile("plancache/args.c")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "args.c run_flags", cArray(t, src, "run_flags"), valued)
	same(t, "args.c bool_flags", cArray(t, src, "bool_flags"), boolean)
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func cArray(t *testing.T, src []byte, name string) []string {
	block := regexp.MustCompile(`(?s)` + name + `\[\] = \{(.*?)NULL`).FindSubmatch(src)
	if block == nil {
		t.Fatalf("args.c: no %s array", name)
	}
	var list []string
	for _, m := range regexp.MustCompile(`"([^"]+)"`).FindAllSubmatch(block[1], -1) {
		list = append(list, string(m[1]))
	}
	return list
}

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		argv, args, cmd []string
	}{
		{[]string{"jail", "-p", "x", "--", "ls", "--", "y"}, []string{"jail", "-p", "x"}, []string{"ls", "--", "y"}},
		{[]string{"--", "--", "ls"}, []string{"--"}, []string{"ls"}},
		{[]string{"jail", "-p", "x"}, []string{"jail", "-p", "x"}, nil},
	} {
		args, cmd := splitCommand(tc.argv)
		if !slices.Equal(args, tc.args) || !slices.Equal(cmd, tc.cmd) {
			t.Errorf("splitCommand(%q) = %q, %q", tc.argv, args, cmd)
		}
	}
}
