package testscripts

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The init stage is a fork of jail's runner, not an exec (jail/stagestart.c):
// the jail's PID 1 holds nothing of the caller's the command was not given,
// whether Go planned the run or it was replayed, by jail or by jail-sh: not
// the host's environment (a variable jail does not pass, HOME and the
// profile path the cache's key holds), not jail's command line (the status
// path, in Go's hand-over too, and jail-sh's JAIL_FLAGS), not the runner's
// fds.
func TestInitStageHoldsNothingOfTheCaller(t *testing.T) {
	dir := t.TempDir()
	sh := filepath.Join(dir, "jail-sh")
	if err := os.Symlink(filepath.Join(s.binDir, "jail"), sh); err != nil {
		t.Fatal(err)
	}
	mark := func(what string) string { return fmt.Sprintf("%s-%d", what, time.Now().UnixNano()) }
	for _, tc := range []struct {
		name, launcher string
		args           func(status string) []string
		env            func(status string) []string
		replayed       bool
	}{
		{name: "planned", launcher: filepath.Join(s.binDir, "jail"),
			args: func(status string) []string { return []string{"-p", "default", "--status-json", status, "--"} }},
		{name: "replayed", launcher: filepath.Join(s.binDir, "jail"), replayed: true,
			args: func(status string) []string { return []string{"-p", "default", "--status-json", status, "--"} }},
		{name: "jail-sh", launcher: sh, replayed: true,
			args: func(string) []string { return []string{"-c"} },
			env: func(status string) []string {
				return []string{"JAIL_SESSION=scrub", "JAIL_STATE_DIR=" + filepath.Join(dir, "state"), "JAIL_FLAGS=--status-json " + status}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"PATH=/usr/bin:/bin"}
			home, profiles := "/nonexistent/"+mark("home"), "/nonexistent/"+mark("profiles")
			hostOnly, status := mark("host-only"), filepath.Join(dir, mark("status")+".json")
			env = append(env, "HOME="+home, "JAIL_PROFILE_PATH="+profiles, "HOST_ONLY_SECRET="+hostOnly)
			start := func(status, cmd string) *exec.Cmd {
				args := tc.args(status)
				if tc.launcher == sh {
					args = append(args, cmd)
				} else {
					args = append(args, strings.Fields(cmd)...)
				}
				c := exec.Command(tc.launcher, args...)
				c.Env = env
				if tc.env != nil {
					c.Env = append(c.Env, tc.env(status)...)
				}
				c.Dir = dir
				return c
			}
			if tc.replayed {
				if out, err := start(filepath.Join(dir, "warm.json"), "true").CombinedOutput(); err != nil {
					t.Fatalf("warm-up run: %v: %s", err, out)
				}
			}
			c := start(status, "sleep 3.3219")
			var stderr bytes.Buffer
			c.Stderr = &stderr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			pid1 := pid1Under(c.Process.Pid, "sleep")
			if pid1 == 0 {
				c.Process.Kill()
				c.Wait()
				t.Fatalf("no PID 1 with the command under it; stderr: %s", stderr.String())
			}
			needles := []string{hostOnly, home, profiles, filepath.Base(status)}
			for _, needle := range needles {
				if n := memCount(t, pid1, needle); n > 0 {
					t.Errorf("PID 1 holds %q %d times in its memory", needle, n)
				}
			}
			if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid1)); strings.TrimRight(string(cmdline), "\x00") != "jail" {
				t.Errorf("PID 1's command line is %q, want \"jail\"", cmdline)
			}
			if env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid1)); len(bytes.Trim(env, "\x00")) > 0 {
				t.Errorf("PID 1 has an environment: %q", env)
			}
			fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid1))
			for _, fd := range fds {
				if target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid1, fd.Name())); strings.HasPrefix(target, dir) {
					t.Errorf("PID 1 holds the runner's fd %s: %s", fd.Name(), target)
				}
			}
			if err := c.Wait(); err != nil {
				t.Fatalf("%v; stderr: %s", err, stderr.String())
			}
			rec, err := os.ReadFile(status)
			if err != nil {
				t.Fatal(err)
			}
			if cached := bytes.Contains(rec, []byte(`"plan_cached":true`)); cached != tc.replayed {
				t.Errorf("plan_cached is %v, want %v: %s", cached, tc.replayed, rec)
			}
		})
	}
}

// pid1Under waits (10 s at most) for the jail's PID 1 among runner's
// children, once the command named name runs under it; 0 if it never does.
func pid1Under(runner int, name string) int {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, k := range childrenOf(runner) {
			if kids := childrenOf(k); comm(k) == "jail-init" && len(kids) > 0 && comm(kids[0]) == name {
				return k
			}
		}
	}
	return 0
}

// The init stage's own failures before the jail exists say what failed:
// with less address space than its stack needs, the runner's line names
// the stack, not "died before it could create the user namespace". The
// window where the exec succeeds and the stack does not is a few MB wide;
// the test walks the limit through it.
func TestInitStageSaysWhyItCannotStart(t *testing.T) {
	dir := t.TempDir()
	jail := filepath.Join(s.binDir, "jail")
	run := func(limit int) (string, error) {
		c := exec.Command("prlimit", fmt.Sprintf("--as=%d", limit), jail, "-p", "default", "--", "true")
		c.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
		c.Dir = dir
		out, err := c.CombinedOutput()
		return string(out), err
	}
	if out, err := run(1 << 40); err != nil {
		t.Fatalf("warm-up run: %v: %s", err, out)
	}
	said := false
	for mb := 20; mb <= 160; mb++ {
		out, _ := run(mb << 20)
		if strings.Contains(out, "died before") {
			t.Errorf("--as=%dM: %q", mb, out)
		}
		said = said || strings.Contains(out, "jail: init stage: map a stack of its own")
	}
	if !said {
		t.Error("no address-space limit from 20 to 160 MiB made the init stage say it could not map its stack")
	}
}
