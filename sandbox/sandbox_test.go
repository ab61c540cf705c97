package sandbox_test

import (
	"context"
	"testing"

	"jail/profiles"
	"jail/sandbox"
)

// A profile loaded once serves many runs: a run's overrides never change
// it (a session's bind must not show up in the next session's run).
func TestRunLeavesValue(t *testing.T) {
	p, err := profiles.Load("default", profiles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := p.Hash()
	st, err := sandbox.Run(context.Background(), sandbox.Profile{Value: p}, []string{"true"},
		sandbox.Options{Overrides: profiles.Overrides{ROBinds: []string{"/etc/hostname:/one"}, TimeLimit: "5s"}})
	if err != nil || st.ExitCode != 0 {
		t.Fatalf("run: %v %+v", err, st)
	}
	if p.Hash() != before {
		t.Error("Run changed the caller's profile")
	}
}
