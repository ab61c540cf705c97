package sandbox_test

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/profiles"
	"github.com/jail-sandbox/jail/sandbox"
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
		sandbox.Options{Overrides: profiles.Overrides{ROBinds: []string{"/etc/hostname:/one"}, TimeLimit: new(5 * time.Second)}})
	if err != nil || st.ExitCode != 0 {
		t.Fatalf("run: %v %+v", err, st)
	}
	if p.Hash() != before {
		t.Error("Run changed the caller's profile")
	}
}

// A writer that stops taking output is a reader that closed: with a cap,
// the command's next write fails as it would without jail, and the record
// says which end closed.
func TestRunClosedOutput(t *testing.T) {
	st, err := sandbox.Run(context.Background(), sandbox.Profile{Name: "default"}, []string{"yes"},
		sandbox.Options{Stdout: &closingWriter{left: 10}, Overrides: profiles.Overrides{MaxOutput: new(uint64(1 << 20)), TimeLimit: new(20 * time.Second)}})
	if err != nil {
		t.Fatal(err)
	}
	if st.ExitCode != 141 || st.TimedOut || st.OutputClosed == nil || !st.OutputClosed.Stdout || st.OutputClosed.Stderr {
		t.Fatalf("want 141 and output_closed.stdout, got exit %d, timed out %v, output_closed %+v", st.ExitCode, st.TimedOut, st.OutputClosed)
	}
}

// The caller sees the whole record: which syscalls the filter refused and
// which hosts the allowlist proxy refused, with the policy and the network
// that did.
func TestRunReportsRefusals(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("needs curl on the host (the jail sees the host's /usr)")
	}
	st, err := sandbox.Run(context.Background(), sandbox.Profile{Name: "default"},
		[]string{"sh", "-c", "unshare -U true; curl -sS -f -m 10 http://not-listed.test/"},
		sandbox.Options{Overrides: profiles.Overrides{Allow: []string{"api.test:80"}, TimeLimit: new(30 * time.Second)}})
	if err != nil {
		t.Fatal(err)
	}
	if st.ExitCode != 22 { // curl -f: the proxy's 403
		t.Errorf("exit %d, want curl's 22", st.ExitCode)
	}
	if st.Seccomp != "default" || len(st.Denied) != 1 || st.Denied[0].Syscall != "unshare" || st.Denied[0].Count != 1 ||
		len(st.Denied[0].Args) != 6 || st.Denied[0].Args[0] != "0x10000000" { // CLONE_NEWUSER
		t.Errorf("seccomp %q, denied %+v; want default's refusal of unshare(CLONE_NEWUSER)", st.Seccomp, st.Denied)
	}
	want := []jail.HostDenial{{Host: "not-listed.test", Port: 80, Count: 1, Reason: "not on the allowlist", Kind: "tcp"}}
	if st.Network != "allowlist" || !slices.Equal(st.NetworkDenied, want) || st.NetworkAllowed == nil || len(st.NetworkAllowed) != 0 {
		t.Errorf("network %q, denied %+v, allowed %+v; want allowlist, %+v, none", st.Network, st.NetworkDenied, st.NetworkAllowed, want)
	}
}

// closingWriter takes left bytes, then fails every write, as a closed
// pipe's reader would.
type closingWriter struct{ left int }

func (w *closingWriter) Write(p []byte) (int, error) {
	if w.left <= 0 {
		return 0, errors.New("closed")
	}
	n := min(len(p), w.left)
	w.left -= n
	return n, nil
}
