package sandbox_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/profiles"
	"github.com/jail-sandbox/jail/sandbox"
)

// A library caller's typed limits hold on a real jail: the time limit ends
// a command that would sleep on, the memory limit OOM-kills a hog.
func TestRunTypedLimits(t *testing.T) {
	start := time.Now()
	st, err := sandbox.Run(context.Background(), sandbox.Profile{Name: "default"}, []string{"sleep", "30"},
		sandbox.Options{Overrides: profiles.Overrides{TimeLimit: new(300 * time.Millisecond)}})
	if err != nil {
		t.Fatal(err)
	}
	if !st.TimedOut || time.Since(start) > 10*time.Second {
		t.Errorf("time limit 300ms: timed out %v after %v, exit %d", st.TimedOut, time.Since(start), st.ExitCode)
	}

	var stderr bytes.Buffer
	// tail keeps every byte of a file with no newline: it grows until the
	// limit stops it.
	st, err = sandbox.Run(context.Background(), sandbox.Profile{Name: "default"}, []string{"tail", "/dev/zero"},
		sandbox.Options{Stderr: &stderr, Overrides: profiles.Overrides{
			Memory:    new(uint64(64 << 20)),
			TimeLimit: new(60 * time.Second),
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !st.OOMKilled || st.ExitCode != 137 || st.TimedOut {
		t.Errorf("memory limit 64M: oom killed %v, exit %d, timed out %v; stderr %q", st.OOMKilled, st.ExitCode, st.TimedOut, stderr.String())
	}
	if !strings.Contains(stderr.String(), "memory limit 64M exceeded") {
		t.Errorf("stderr %q does not name the 64M limit", stderr.String())
	}
}

// Prepare gives the typed values to the jail's Config as they were given,
// and leaves the caller's profile alone.
func TestPrepareTyped(t *testing.T) {
	p, err := profiles.Load("default", profiles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := p.Hash()
	r, err := sandbox.Prepare(sandbox.Profile{Value: p}, profiles.Overrides{
		TimeLimit: new(90 * time.Second), Memory: new(uint64(256 << 20)), Pids: new(uint64(32)),
		CPU: new(0.5), MaxOutput: new(uint64(1 << 20)), Network: profiles.NetworkNone,
	}, []string{"true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := r.Config.Limits
	if r.Config.TimeLimit != 90*time.Second || l.Memory != 256<<20 || l.Pids != 32 || l.CPU != 0.5 || l.MaxOutput != 1<<20 {
		t.Errorf("config: time %v, limits %+v", r.Config.TimeLimit, l)
	}
	if r.Config.ProfileHash != r.Profile.Hash() || r.Config.ProfileHash == before {
		t.Errorf("profile hash %q: not the changed profile's", r.Config.ProfileHash)
	}
	if p.Hash() != before {
		t.Error("Prepare changed the caller's profile")
	}
	if len(r.Options.Protected) == 0 || r.Options.SeccompCache == "" {
		t.Errorf("plan options %+v: jail's own state is not protected", r.Options)
	}
}

// A step after the overrides that fails leaves the run as far as it got:
// the CLI's status record names the profile.
func TestPrepareSecretsFail(t *testing.T) {
	f := filepath.Join(t.TempDir(), "s.env")
	if err := os.WriteFile(f, []byte("A=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := sandbox.Prepare(sandbox.Profile{Name: "default"}, profiles.Overrides{Secrets: f}, []string{"true"}, nil)
	if err == nil || !strings.Contains(err.Error(), "chmod 600 it") {
		t.Fatalf("err = %v", err)
	}
	if r == nil || r.Config.Profile != "default" || r.Config.ProfileHash != "" {
		t.Errorf("prepared = %+v", r)
	}
	if r, err := sandbox.Prepare(sandbox.Profile{Name: "default"}, profiles.Overrides{Hostname: "a b"}, []string{"true"}, nil); err == nil || r != nil {
		t.Errorf("bad overrides: %+v, %v", r, err)
	}
}
