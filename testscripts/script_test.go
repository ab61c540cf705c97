// Package testscripts holds jail's regression tests: txtar scripts, one
// folder per area, that run the real static binary in real jails, as root
// and as an unprivileged user the suite creates. They attack each security
// invariant the scripts name and check that the attack fails.
package testscripts

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/testhost"
)

// unprivUser is the unprivileged caller the suite runs jails as.
const unprivUser = "tester"

// suite is what TestMain prepares for every script.
type suite struct {
	binDir   string // holds the jail binary; on every script's PATH
	workRoot string // scripts' work directories, reachable by unprivUser
	unpriv   *user.User
	// delegated are the cgroup directories made for unpriv's jails.
	delegated []string
}

var s suite // set once by TestMain, read-only afterwards

func TestMain(m *testing.M) {
	if os.Getenv(noCloseRangeEnv) != "" {
		execWithoutCloseRange(os.Args[1:]) // never returns
	}
	var err error
	s, err = prepare()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testscripts:", err)
		os.Exit(1)
	}
	code := m.Run()
	for i := len(s.delegated) - 1; i >= 0; i-- {
		os.Remove(s.delegated[i]) // empty by now: every run removed its own
	}
	os.RemoveAll(s.binDir)
	os.RemoveAll(s.workRoot)
	os.Exit(code)
}

// prepare puts the jail binary where an unprivileged user can run it (the
// checkout may be under a 0700 home), and creates that user when missing.
func prepare() (suite, error) {
	var st suite
	bin, err := jailBinary()
	if err != nil {
		return st, err
	}
	if st.binDir, err = os.MkdirTemp("", "jail-bin-"); err != nil {
		return st, err
	}
	if err := os.Chmod(st.binDir, 0o755); err != nil {
		return st, err
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return st, err
	}
	if err := os.WriteFile(filepath.Join(st.binDir, "jail"), data, 0o755); err != nil {
		return st, err
	}
	// sysprobe makes, inside a jail, the syscalls the seccomp scripts
	// show refused: static, so it runs in any profile.
	probe := exec.Command("gcc", "-static", "-O2", "-o", filepath.Join(st.binDir, "sysprobe"), "testdata/sysprobe.c", "-lpthread")
	if out, err := probe.CombinedOutput(); err != nil {
		return st, fmt.Errorf("build sysprobe: %v\n%s", err, out)
	}
	hog := exec.Command("gcc", "-static", "-O1", "-o", filepath.Join(st.binDir, "hog"), "testdata/hog.c")
	if out, err := hog.CombinedOutput(); err != nil {
		return st, fmt.Errorf("build hog: %v\n%s", err, out)
	}
	if st.workRoot, err = os.MkdirTemp("", "jail-scripts-"); err != nil {
		return st, err
	}
	if err := os.Chmod(st.workRoot, 0o755); err != nil {
		return st, err
	}
	if os.Geteuid() == 0 {
		if st.unpriv, err = testhost.User(unprivUser); err != nil {
			return st, err
		}
		if st.delegated, err = testhost.DelegateCgroups(st.unpriv); err != nil {
			return st, err
		}
	}
	return st, nil
}

// jailBinary is $JAIL_BIN (the Makefile's bin/jail), or a fresh static
// build of the module when the tests run on their own.
func jailBinary() (string, error) {
	if b := os.Getenv("JAIL_BIN"); b != "" {
		return filepath.Abs(b)
	}
	dir, err := os.MkdirTemp("", "jail-build-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "jail")
	cmd := exec.Command("go", "build", "-tags", "netgo osusergo urfave_cli_no_docs",
		"-ldflags", `-s -w -extldflags "-static"`, "-o", out, "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build jail: %v\n%s", err, b)
	}
	return out, nil
}

func params(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 filepath.Join(".", dir),
		WorkdirRoot:         s.workRoot,
		RequireExplicitExec: true,
		Setup:               setup,
		Condition:           condition,
		Cmds:                commands(),
	}
}

// setup opens the work directory to the unprivileged user and puts the
// jail binary first on PATH.
func setup(env *testscript.Env) error {
	if err := os.Chmod(env.WorkDir, 0o777); err != nil {
		return err
	}
	env.Setenv("PATH", s.binDir+":"+env.Getenv("PATH"))
	env.Setenv("SYSPROBE", filepath.Join(s.binDir, "sysprobe"))
	env.Setenv("HOG", filepath.Join(s.binDir, "hog"))
	repo, _ := filepath.Abs("..")
	env.Setenv("REPO", repo)
	if s.unpriv != nil {
		env.Setenv("TESTER_UID", s.unpriv.Uid)
		env.Setenv("TESTER_GID", s.unpriv.Gid)
	}
	env.Setenv("UID", strconv.Itoa(os.Geteuid()))
	env.Values[backgroundKey{}] = newBackground()
	return nil
}

// condition answers [root] (the suite runs as root, so it can also run
// jails as the unprivileged user), [amd64], [cgroupv1] (the host's pids
// controller is on v1), [rtprio] (it may raise RLIMIT_RTPRIO), [tunuser]
// (the unprivileged user may open /dev/net/tun), [npmregistry] (the host's
// npm registry answers), and [file_getattr]: the
// kernel has syscall 468 (Linux 6.17), one libseccomp cannot name.
func condition(cond string) (bool, error) {
	switch cond {
	case "root":
		return os.Geteuid() == 0, nil
	case "amd64":
		return runtime.GOARCH == "amd64", nil
	case "cgroupv1":
		_, err := os.Stat("/sys/fs/cgroup/pids/cgroup.procs")
		return err == nil, nil
	case "rtprio":
		// This caller may raise RLIMIT_RTPRIO (CAP_SYS_RESOURCE).
		return exec.Command("sh", "-c", "ulimit -r 50").Run() == nil, nil
	case "tunuser":
		// The unprivileged user may open /dev/net/tun, which the
		// allowlist needs: 0666 where udev made it, 0600 on hosts (and
		// containers) without udev, this development VM among them.
		var st unix.Stat_t
		return unix.Stat("/dev/net/tun", &st) == nil && st.Mode&0o006 == 0o006, nil
	case "npmregistry":
		// The registry the host's npm uses answers (registry_test.go).
		_, err := npmRegistry()
		return err == nil, nil
	case "file_getattr":
		_, _, errno := unix.Syscall6(468, ^uintptr(0), 0, 0, 0, 0, 0)
		return errno != unix.ENOSYS, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

func TestCache(t *testing.T)     { testscript.Run(t, params("cache")) }
func TestCLI(t *testing.T)       { testscript.Run(t, params("cli")) }
func TestIsolation(t *testing.T) { testscript.Run(t, params("isolation")) }
func TestProcess(t *testing.T)   { testscript.Run(t, params("process")) }
func TestProfiles(t *testing.T)  { testscript.Run(t, params("profiles")) }
func TestSeccomp(t *testing.T)   { testscript.Run(t, params("seccomp")) }
func TestLimits(t *testing.T)    { testscript.Run(t, params("limits")) }
func TestNetwork(t *testing.T)   { testscript.Run(t, params("network")) }
func TestAgent(t *testing.T)     { testscript.Run(t, params("agent")) }
func TestTTY(t *testing.T)       { testscript.Run(t, params("tty")) }
