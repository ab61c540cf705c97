package testscripts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The init stage is a fork of jail's runner, not an exec (jail/stagestart.c):
// on a replayed plan, too, the jail's PID 1 holds nothing of the caller's
// that the command was not given: not the host's environment, not jail's
// own command line, not the fds of the runner's (the status record).
func TestInitStageHoldsNothingOfTheCaller(t *testing.T) {
	dir := t.TempDir()
	hostOnly := fmt.Sprintf("host-only-%d", time.Now().UnixNano())
	run := func(status string, cmd ...string) *exec.Cmd {
		c := exec.Command(filepath.Join(s.binDir, "jail"), append([]string{"-p", "default", "--status-json", status, "--"}, cmd...)...)
		c.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "HOST_ONLY_SECRET=" + hostOnly}
		c.Dir = dir
		return c
	}
	if out, err := run(filepath.Join(dir, "first.json"), "true").CombinedOutput(); err != nil {
		t.Fatalf("first run: %v: %s", err, out)
	}
	argOnly := fmt.Sprintf("arg-only-%d", time.Now().UnixNano())
	status := filepath.Join(dir, argOnly+".json")
	c := run(status, "sleep", "3.3219")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	var pid1 int
	for deadline := time.Now().Add(10 * time.Second); pid1 == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, k := range childrenOf(c.Process.Pid) {
			if comm(k) == "jail-init" && len(childrenOf(k)) > 0 && comm(childrenOf(k)[0]) == "sleep" {
				pid1 = k
			}
		}
	}
	if pid1 == 0 {
		c.Process.Kill()
		c.Wait()
		t.Fatal("no PID 1 with the command under it")
	}
	for _, needle := range []string{hostOnly, argOnly} {
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
		t.Fatal(err)
	}
	var rec struct {
		PlanCached bool `json:"plan_cached"`
	}
	if data, err := os.ReadFile(status); err != nil || json.Unmarshal(data, &rec) != nil || !rec.PlanCached {
		t.Errorf("the second run was not replayed from the plan cache: %s %v", data, err)
	}
}
