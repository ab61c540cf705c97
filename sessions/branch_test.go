package sessions

import (
	"os/exec"
	"strings"
	"testing"
)

// CheckBranch refuses every name git refuses, and more; what it accepts
// git accepts too.
func TestCheckBranch(t *testing.T) {
	good := []string{"jail/alpha", "task/beta-2", "a.b", "x_y", "feature/ISSUE-17/fix", strings.Repeat("x", 200)}
	bad := []string{"", "a..b", "-rf", "x@{1}", "@", "HEAD", "x.lock", "a/b.lock/c", "x/", "x.", "/x", "a//b", ".x", "a/.b",
		"a b", "a\tb", "a\nb", "a\x00b", "a\x7fb", "a\x1b[31m", "a~1", "a^", "a:b", "a?", "a*", "a[b", `a\b`, "caf\xc3\xa9",
		strings.Repeat("x", 201)}
	git, _ := exec.LookPath("git")
	for _, name := range good {
		if err := CheckBranch(name); err != nil {
			t.Errorf("CheckBranch(%q): %v", name, err)
		}
		if git != "" {
			if err := exec.Command(git, "check-ref-format", "--branch", name).Run(); err != nil {
				t.Errorf("git check-ref-format --branch %q: %v", name, err)
			}
		}
	}
	for _, name := range bad {
		if err := CheckBranch(name); err == nil {
			t.Errorf("CheckBranch(%q): accepted", name)
		}
	}
}

// LastLine keeps a jail's text from driving the caller's terminal.
func TestLastLine(t *testing.T) {
	for in, want := range map[string]string{
		"one\ntwo\n":             "two",
		"fatal: \x1b[2Jgone\n":   "fatal: ?[2Jgone",
		"a\rb":                   "a?b",
		"":                       "",
		strings.Repeat("y", 400): strings.Repeat("y", 300) + "...",
	} {
		if got := LastLine(in); got != want {
			t.Errorf("LastLine(%q) = %q, want %q", in, got, want)
		}
	}
}
