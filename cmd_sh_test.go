package main

import (
	"slices"
	"strings"
	"testing"
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
