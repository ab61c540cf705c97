package mount_test

// Files mounted over others (Spec.Over) in real jails: the covered file
// shows the plan's content, read-only, the rest of its directory is the
// host's, and nothing of the cover is left anywhere else in the root. No
// profile key makes such a file (the planner adds it: issue 13's CA
// bundle), so the runs go through the Go API with the spec appended.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/testhost"
	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/mount"
	"github.com/jail-sandbox/jail/profiles"
	"github.com/jail-sandbox/jail/sandbox"
)

// childEnv marks the copy of this test run as the unprivileged user.
const childEnv = "JAIL_FILEOVER_CHILD"

func TestFileOverJail(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real jails")
	}
	t.Run("self", fileOverJail)
	if os.Geteuid() != 0 || os.Getenv(childEnv) != "" {
		return
	}
	t.Run("tester", func(t *testing.T) { asTester(t, "^TestFileOverJail$/^self$") })
}

func fileOverJail(t *testing.T) {
	dir := hostDir(t)
	must(t, os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("host bundle\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "other.pem"), []byte("other\n"), 0o644))
	// A CA bundle's size, so the plan carries it whole to the jail.
	var content bytes.Buffer
	content.WriteString("jail bundle\n")
	for content.Len() < 256<<10 {
		content.WriteString("# 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n")
	}
	over := mount.Spec{Kind: mount.File, Over: true, Dst: "/etc/jailtest/ca.crt", Content: content.Bytes()}
	bind := []string{dir + ":/etc/jailtest"}

	script := `
f=/etc/jailtest/ca.crt
head -n 1 $f; wc -c <$f; cat /etc/jailtest/other.pem; ls -A /etc/jailtest
grep " $f " /proc/self/mountinfo | cut -d" " -f6
echo x >>$f && echo wrote
rm -f $f && echo removed
mv /etc/jailtest/other.pem $f && echo moved
true`
	out, errOut, err := runJail(t, bind, []string{"sh", "-c", script}, over)
	if err != nil {
		t.Fatalf("run: %v; stderr: %s", err, errOut)
	}
	want := fmt.Sprintf("jail bundle\n%d\nother\nca.crt\nother.pem\nro,nosuid,nodev,noexec,relatime\n", content.Len())
	if out != want {
		t.Errorf("in the jail:\n%s\nwant:\n%s", out, want)
	}
	if !strings.Contains(errOut, "Read-only file system") {
		t.Errorf("writing the covered file: stderr %q, want a read-only file system", errOut)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ca.crt")); err != nil || string(b) != "host bundle\n" {
		t.Errorf("host's file after the run: %q, %v", b, err)
	}

	// Nothing of the cover shows on the jail's own root: the same
	// names as a run without it, and none holds the content.
	list := []string{"sh", "-c", "find / -xdev | sort; find / -xdev -type f -exec grep -l 'jail bundle' {} +; true"}
	with, errOut, err := runJail(t, bind, list, over)
	if err != nil {
		t.Fatalf("run: %v; stderr: %s", err, errOut)
	}
	without, errOut, err := runJail(t, bind, list)
	if err != nil {
		t.Fatalf("run: %v; stderr: %s", err, errOut)
	}
	if with != without || !strings.Contains(with, "\n/etc/jailtest\n") {
		t.Errorf("the root with the cover:\n%s\nwithout:\n%s", with, without)
	}
}

// A file bound on its own can be covered too, at its own path: a small one
// (which the plan copies onto the root) and one too big to copy.
func TestFileOverBoundFile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real jails")
	}
	t.Run("self", fileOverBoundFile)
	if os.Geteuid() != 0 || os.Getenv(childEnv) != "" {
		return
	}
	t.Run("tester", func(t *testing.T) { asTester(t, "^TestFileOverBoundFile$/^self$") })
}

func fileOverBoundFile(t *testing.T) {
	dir := hostDir(t)
	small, big := filepath.Join(dir, "small.crt"), filepath.Join(dir, "big.crt")
	must(t, os.WriteFile(small, []byte("host small\n"), 0o644))
	must(t, os.WriteFile(big, []byte("host big\n"+strings.Repeat("#\n", 64<<10)), 0o644))
	out, errOut, err := runJail(t, []string{small + ":/etc/small.crt", big + ":/etc/big.crt"},
		[]string{"sh", "-c", "cat /etc/small.crt /etc/big.crt; echo x >>/etc/big.crt || echo refused"},
		mount.Spec{Kind: mount.File, Over: true, Dst: "/etc/small.crt", Content: []byte("jail small\n")},
		mount.Spec{Kind: mount.File, Over: true, Dst: "/etc/big.crt", Content: []byte("jail big\n")})
	if err != nil {
		t.Fatalf("run: %v; stderr: %s", err, errOut)
	}
	if want := "jail small\njail big\nrefused\n"; out != want {
		t.Errorf("in the jail: %q, want %q", out, want)
	}
}

// Over a path with nothing there, the jail is not built: 125, and the
// line names the path.
func TestFileOverNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real jails")
	}
	t.Run("self", fileOverNothing)
	if os.Geteuid() != 0 || os.Getenv(childEnv) != "" {
		return
	}
	t.Run("tester", func(t *testing.T) { asTester(t, "^TestFileOverNothing$/^self$") })
}

func fileOverNothing(t *testing.T) {
	dir := hostDir(t)
	must(t, os.WriteFile(filepath.Join(dir, "other.pem"), []byte("other\n"), 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	for _, tc := range []struct{ dst, want string }{
		{"/etc/jailtest/missing.crt", "file /etc/jailtest/missing.crt: nothing there to cover"},
		{"/etc/jailtest/sub", "file /etc/jailtest/sub: nothing there to cover (not a regular file)"},
		{"/etc/jailtest/nodir/x.crt", "file /etc/jailtest/nodir/x.crt: nothing there to cover"},
	} {
		over := mount.Spec{Kind: mount.File, Over: true, Dst: tc.dst, Content: []byte("x\n")}
		out, errOut, err := runJail(t, []string{dir + ":/etc/jailtest"}, []string{"echo", "ran"}, over)
		var setup *jail.SetupError
		if !errors.As(err, &setup) || setup.Msg != tc.want {
			t.Errorf("%s: error %v, want %q", tc.dst, err, tc.want)
		}
		if out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: stdout %q, stderr %q; want nothing run and the line", tc.dst, out, errOut)
		}
	}
}

// runJail runs argv under the default profile with binds read-only
// (SRC:DST) and the specs overs added; it returns the
// command's output, stderr (the command's and jail's), and the run's
// error, which is also one when it did not exit 0.
func runJail(t *testing.T, binds []string, argv []string, overs ...mount.Spec) (string, string, error) {
	t.Helper()
	limit := 30 * time.Second
	r, err := sandbox.Prepare(sandbox.Profile{Name: "default"},
		profiles.Overrides{ROBinds: binds, TimeLimit: &limit, Network: profiles.NetworkNone}, argv, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	r.Config.Mounts = append(r.Config.Mounts, overs...)
	var stdout, stderr bytes.Buffer
	st, err := jail.RunStatus(context.Background(), r.Config, r.Options, jail.Stdio{Stdout: &stdout, Stderr: &stderr})
	if err == nil && st.ExitCode != 0 {
		err = fmt.Errorf("exit %d: %s", st.ExitCode, st.Error)
	}
	var setup *jail.SetupError
	if errors.As(err, &setup) && st.ExitCode != 125 {
		t.Errorf("jail's own failure with exit %d, want 125", st.ExitCode)
	}
	return stdout.String(), stderr.String(), err
}

// hostDir is a directory the jail's unprivileged host uid may read (a
// root caller's jail runs as one).
func hostDir(t *testing.T) string {
	dir := t.TempDir()
	must(t, os.Chmod(filepath.Dir(dir), 0o755))
	must(t, os.Chmod(dir, 0o755))
	return dir
}

// asTester runs the tests that run matches again, in a copy of this test
// binary run by the unprivileged test user, with the cgroups a root admin
// delegates to it.
func asTester(t *testing.T, run string) {
	u, err := testhost.User("tester")
	if err != nil {
		t.Fatal(err)
	}
	made, err := testhost.DelegateCgroups(u)
	t.Cleanup(func() {
		for i := len(made) - 1; i >= 0; i-- {
			os.Remove(made[i])
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := hostDir(t)
	bin := filepath.Join(dir, "mount.test")
	must(t, copyFile(self, bin))
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cmd := exec.Command(bin, "-test.run="+run, "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{childEnv + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("as tester: %v\n%s", err, out)
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
