package sandbox_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/profiles"
	"github.com/jail-sandbox/jail/sandbox"
)

// While a jail runs, the caller's other children inherit nothing of it: the
// hand-over memfd holds the plan's environment, secrets included.
func TestRunHandoffNotInherited(t *testing.T) {
	done := make(chan error, 1)
	go func() {
		st, err := sandbox.Run(context.Background(), sandbox.Profile{Name: "default"}, []string{"sleep", "2"},
			sandbox.Options{Overrides: profiles.Overrides{TimeLimit: new(10 * time.Second)}})
		if err == nil && st.ExitCode != 0 {
			t.Errorf("run: %+v", st)
		}
		done <- err
	}()
	time.Sleep(700 * time.Millisecond) // the runner is up; the jail sleeps
	out, err := exec.Command("sh", "-c", "ls -l /proc/self/fd/").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if strings.Contains(string(out), "jail-plan") {
		t.Errorf("a child of the caller holds the jail's plan:\n%s", out)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
