package main

import (
	"slices"
	"testing"
)

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
