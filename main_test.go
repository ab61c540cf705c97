package main

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"jail/plancache"
)

// TestCacheableFlags keeps the plan cache's list of run flags, in Go and
// in C, equal to the flags `jail run` has: a flag the cache did not know
// would make an invocation uncacheable (harmless), one it knew that Go did
// not would make it read arguments as Go does not (not harmless).
func TestCacheableFlags(t *testing.T) {
	var names []string
	for _, f := range runFlags() {
		names = append(names, f.Names()...)
	}
	slices.Sort(names)
	goList := plancache.RunFlags()
	slices.Sort(goList)
	if !slices.Equal(names, goList) {
		t.Errorf("plancache.RunFlags() = %q, want the run flags %q", goList, names)
	}
	src, err := os.ReadFile("plancache/args.c")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)run_flags\[\] = \{(.*?)NULL`).FindSubmatch(src)
	if block == nil {
		t.Fatal("args.c: no run_flags array")
	}
	var cList []string
	for _, m := range regexp.MustCompile(`"([^"]+)"`).FindAllSubmatch(block[1], -1) {
		cList = append(cList, string(m[1]))
	}
	slices.Sort(cList)
	if !slices.Equal(names, cList) {
		t.Errorf("args.c run_flags = %q, want %q", cList, names)
	}
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
