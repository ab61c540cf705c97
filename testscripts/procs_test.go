package testscripts

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// helperOf implements
//
//	helper TEXT ARGV0
//
// which describes, one line each, the helper process of a jail: the child
// whose argv[0] is ARGV0 (jail-proxy) of the host process whose command
// line holds TEXT (the runner). Lines: "fdN caller|null|own" for its
// stdin, stdout and stderr (null: /dev/null; caller: the file the runner
// has as fd N, the caller's own; own: anything else), and "cgroup
// run|other" (run: the cgroups of its sibling jail-init, the jail's PID 1,
// which is in the run's cgroup).
func helperOf(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: helper TEXT ARGV0")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, parent := range procsHolding(args[0]) {
			helper, init := 0, 0
			for _, c := range childrenOf(parent) {
				if argv0(c) == args[1] {
					helper = c
				}
				if comm(c) == "jail-init" {
					init = c
				}
			}
			if helper == 0 || init == 0 {
				continue
			}
			for fd := 0; fd < 3; fd++ {
				fmt.Fprintf(ts.Stdout(), "fd%d %s\n", fd, fdKind(helper, parent, fd))
			}
			hc, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", helper))
			ic, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", init))
			where := "other"
			if len(hc) > 0 && bytes.Equal(hc, ic) {
				where = "run"
			}
			fmt.Fprintf(ts.Stdout(), "cgroup %s\n", where)
			ts.Setenv("HELPER_PID", strconv.Itoa(helper))
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("after 10s: no %s child of a process holding %q", args[1], args[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// procsHolding are the host processes whose command line holds text,
// jail's own included.
func procsHolding(text string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(cmdline, []byte(text)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// childrenOf are the children of pid, from its threads' children lists.
func childrenOf(pid int) []int {
	var kids []int
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				kids = append(kids, n)
			}
		}
	}
	return kids
}

func argv0(pid int) string {
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	first, _, _ := bytes.Cut(cmdline, []byte{0})
	return string(first)
}

func comm(pid int) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(data))
}

// fdKind says what pid's fd is: the file parent has as the same fd (the
// caller's, for jail's runner), /dev/null, or something of its own.
func fdKind(pid, parent, fd int) string {
	var st, pst, null syscall.Stat_t
	if syscall.Stat(fmt.Sprintf("/proc/%d/fd/%d", pid, fd), &st) != nil {
		return "closed"
	}
	if syscall.Stat("/dev/null", &null) == nil && st.Rdev == null.Rdev && st.Mode&syscall.S_IFMT == syscall.S_IFCHR {
		return "null"
	}
	if syscall.Stat(fmt.Sprintf("/proc/%d/fd/%d", parent, fd), &pst) == nil && st.Dev == pst.Dev && st.Ino == pst.Ino {
		return "caller"
	}
	return "own"
}
