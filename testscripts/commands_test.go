package testscripts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The scripts' own commands, beyond testscript's:
//
//	run [-code N] [-as USER] [-fd100 FILE] [-noclose-range] [-bg NAME] PROG ARGS...
//	    run PROG (from PATH) and check its exact exit status (default 0);
//	    -as runs it as USER, -fd100 passes FILE open as fd 100 (above
//	    the fds jail itself hands its init stage), -noclose-range
//	    makes close_range(2) fail for it, -bg starts it in the background
//	    under NAME (then: bgwait, signal)
//	bgwait [-code N] NAME      wait for a background run; its output becomes stdout/stderr
//	signal [-repeat N] SIG NAME
//	                           send SIG (KILL, TERM, INT, ...) to background run NAME
//	                           (N times, 20 ms apart)
//	ptyrun [-code N] WAIT KEYS -- PROG ARGS...
//	                           run PROG on a terminal of its own (a new pty, its
//	                           controlling terminal); once its output holds WAIT,
//	                           type KEYS (Go-quoted: "\x03" is ^C); check its exit
//	helper TEXT ARGV0          describe the jail's helper ARGV0 (procs_test.go); its pid goes in $HELPER_PID
//	waitproc TEXT              wait (10 s at most) for a host process whose arguments hold TEXT's
//	                           words, whole and in order ("sleep 3" is not "sleep 3601")
//	noproc TEXT                wait (10 s at most) until no host process's arguments hold TEXT's
//	                           (TEXT pid:N: until process N is gone; orphan:COMM: until no
//	                           process named COMM is left to pid 1)
//	sentinel [-as USER] NAME   start a host process (sleep) as USER; it is killed at the end
//	alive NAME                 the sentinel NAME is still running
//	chown USER PATH...         chown -R
//	owner UID PATH             PATH belongs to host uid UID
//	nocommonlines A B          files A and B share no line
//	userdir DIR...             make directories an unprivileged user owns: as
//	                           root, the test user (jails refuse root-owned
//	                           writable binds); otherwise the caller
//
// Every process these start is ended by PID when the script ends.
func commands() map[string]func(*testscript.TestScript, bool, []string) {
	// Background runs are per script: scripts run in parallel.
	per := func(f func(*background, *testscript.TestScript, bool, []string)) func(*testscript.TestScript, bool, []string) {
		return func(ts *testscript.TestScript, neg bool, args []string) {
			f(ts.Value(backgroundKey{}).(*background), ts, neg, args)
		}
	}
	return map[string]func(*testscript.TestScript, bool, []string){
		"run":           per((*background).run),
		"bgwait":        per((*background).wait),
		"signal":        per((*background).signal),
		"sentinel":      per((*background).sentinel),
		"alive":         per((*background).alive),
		"waitproc":      func(ts *testscript.TestScript, neg bool, args []string) { waitProc(ts, neg, args, true) },
		"noproc":        func(ts *testscript.TestScript, neg bool, args []string) { waitProc(ts, neg, args, false) },
		"chown":         chown,
		"owner":         owner,
		"nocommonlines": nocommonlines,
		"userdir":       userdir,
		"jsonrange":     jsonRange,
		"hostsline":     hostsLine,
		"sizerange":     sizeRange,
		"helper":        helperOf,
		"ptyrun":        ptyRun,
	}
}

// backgroundKey holds a script's *background in its Env.Values.
type backgroundKey struct{}

func newBackground() *background { return &background{procs: map[string]*bgProc{}} }

type bgProc struct {
	cmd            *exec.Cmd
	stdout, stderr *bytes.Buffer
	done           chan error
}

// background holds the processes one script started; commands() makes one
// per script, since testscript calls it per Params.
type background struct {
	mu    sync.Mutex
	procs map[string]*bgProc
}

type runOpts struct {
	code    int
	as      string
	fdHigh  string
	bg      string
	noClose bool
}

func parseRunOpts(ts *testscript.TestScript, args []string) (runOpts, []string) {
	o := runOpts{}
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args) > 1 {
		switch args[0] {
		case "-code":
			n, err := strconv.Atoi(args[1])
			ts.Check(err)
			o.code = n
		case "-as":
			o.as = args[1]
		case "-fd100":
			o.fdHigh = ts.MkAbs(args[1])
		case "-bg":
			o.bg = args[1]
		case "-noclose-range":
			o.noClose = true
			args = args[1:]
			continue
		default:
			return o, args
		}
		args = args[2:]
	}
	if len(args) == 0 {
		ts.Fatalf("usage: run [-code N] [-as USER] [-fd100 FILE] [-bg NAME] PROG ARGS...")
	}
	return o, args
}

func (b *background) command(ts *testscript.TestScript, o runOpts, args []string) *exec.Cmd {
	path, err := exec.LookPath(args[0])
	if strings.Contains(args[0], "/") {
		path, err = ts.MkAbs(args[0]), nil
	}
	if err != nil {
		// LookPath sees the test's PATH; the script's is in its env.
		for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
			if p := filepath.Join(dir, args[0]); isExec(p) {
				path, err = p, nil
				break
			}
		}
	}
	ts.Check(err)
	cmd := exec.Command(path, args[1:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = scriptEnv(ts)
	if o.noClose {
		self, err := os.Executable()
		ts.Check(err)
		cmd = exec.Command(self, append([]string{path}, args[1:]...)...)
		cmd.Dir = ts.MkAbs(".")
		cmd.Env = append(scriptEnv(ts), noCloseRangeEnv+"=1")
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if o.as != "" {
		u, err := user.Lookup(o.as)
		ts.Check(err)
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
		// $WORK/.tmp is root's; the user gets the system's.
		cmd.Env = append(cmd.Env, "HOME=/nonexistent", "USER="+o.as, "TMPDIR=/tmp")
	}
	if o.fdHigh != "" {
		f, err := os.Open(o.fdHigh)
		ts.Check(err)
		ts.Defer(func() { f.Close() })
		cmd.ExtraFiles = make([]*os.File, 98)
		cmd.ExtraFiles[97] = f
	}
	return cmd
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// scriptEnv is the script's environment as the script sees it.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if v := ts.Getenv(k); v != "" || k == "PATH" {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range []string{"WORK", "HOME", "TMPDIR", "PATH", "SECRET", "TESTER_UID", "TESTER_GID", "UID", "JAIL_PROFILE_PATH", "TERM", "XDG_RUNTIME_DIR", "SYSPROBE", "REPO", "JAIL_STATE_DIR", "JAIL_SESSION", "JAIL_PROFILE", "JAIL_ALLOW", "JAIL_FLAGS"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func (b *background) run(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("use run -code N, not ! run")
	}
	o, args := parseRunOpts(ts, args)
	cmd := b.command(ts, o, args)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ts.Check(cmd.Start())
	ts.Defer(func() { killGroup(cmd) })
	if o.bg != "" {
		p := &bgProc{cmd: cmd, stdout: &stdout, stderr: &stderr, done: make(chan error, 1)}
		go func() { p.done <- cmd.Wait() }()
		b.mu.Lock()
		b.procs[o.bg] = p
		b.mu.Unlock()
		return
	}
	err := cmd.Wait()
	finish(ts, o.code, err, &stdout, &stderr)
}

// finish makes a run's output the script's stdout/stderr and checks its
// exit status.
func finish(ts *testscript.TestScript, want int, err error, stdout, stderr *bytes.Buffer) {
	fmt.Fprint(ts.Stdout(), stdout.String())
	fmt.Fprint(ts.Stderr(), stderr.String())
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			got = 128 + int(ws.Signal())
		}
	} else if err != nil {
		ts.Fatalf("run: %v", err)
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d\nstderr: %s", got, want, stderr.String())
	}
}

func (b *background) get(ts *testscript.TestScript, name string) *bgProc {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.procs[name]
	if p == nil {
		ts.Fatalf("no background run named %q", name)
	}
	return p
}

func (b *background) wait(ts *testscript.TestScript, neg bool, args []string) {
	o, args := parseRunOpts(ts, append(args, "x"))
	if len(args) != 2 {
		ts.Fatalf("usage: bgwait [-code N] NAME")
	}
	p := b.get(ts, args[0])
	select {
	case err := <-p.done:
		finish(ts, o.code, err, p.stdout, p.stderr)
	case <-time.After(60 * time.Second):
		ts.Fatalf("background run %s still running after 60s", args[0])
	}
}

var signals = map[string]syscall.Signal{
	"KILL": syscall.SIGKILL, "TERM": syscall.SIGTERM, "INT": syscall.SIGINT,
	"HUP": syscall.SIGHUP, "QUIT": syscall.SIGQUIT, "USR1": syscall.SIGUSR1,
	"USR2": syscall.SIGUSR2, "WINCH": syscall.SIGWINCH, "TSTP": syscall.SIGTSTP,
	"STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT,
}

func (b *background) signal(ts *testscript.TestScript, neg bool, args []string) {
	repeat := 1
	if len(args) == 4 && args[0] == "-repeat" {
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		repeat, args = n, args[2:]
	}
	if len(args) != 2 || signals[args[0]] == 0 {
		ts.Fatalf("usage: signal [-repeat N] KILL|TERM|INT|HUP|QUIT|USR1|USR2|WINCH|TSTP|STOP|CONT NAME")
	}
	p := b.get(ts, args[1])
	for i := 0; i < repeat; i++ {
		if i > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		ts.Check(p.cmd.Process.Signal(signals[args[0]]))
	}
}

// killGroup ends a process the script started, and its process group, by
// PID: only what the suite itself started.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.ProcessState != nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Process.Kill()
}

func (b *background) sentinel(ts *testscript.TestScript, neg bool, args []string) {
	o, args := parseRunOpts(ts, append(args, "x"))
	if len(args) != 2 {
		ts.Fatalf("usage: sentinel [-as USER] NAME")
	}
	cmd := b.command(ts, o, []string{"sleep", "3600"})
	ts.Check(cmd.Start())
	ts.Defer(func() { killGroup(cmd) })
	p := &bgProc{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	b.mu.Lock()
	b.procs[args[0]] = p
	b.mu.Unlock()
}

func (b *background) alive(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: alive NAME")
	}
	p := b.get(ts, args[0])
	select {
	case err := <-p.done:
		p.done <- err
		if !neg {
			ts.Fatalf("%s is dead: %v", args[0], err)
		}
	default:
		if neg {
			ts.Fatalf("%s is alive", args[0])
		}
	}
}

// waitProc waits for a host process whose command line holds text to
// appear (want) or to be gone (!want).
func waitProc(ts *testscript.TestScript, neg bool, args []string, want bool) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: waitproc|noproc TEXT")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var pids []int
		if n, ok := strings.CutPrefix(args[0], "pid:"); ok {
			// One process by its pid (helper sets $HELPER_PID): gone
			// once /proc no longer has it, or only as a zombie.
			if st, err := os.ReadFile("/proc/" + n + "/stat"); err == nil && !bytes.Contains(st, []byte(") Z ")) {
				pid, _ := strconv.Atoi(n)
				pids = append(pids, pid)
			}
		} else if comm, ok := strings.CutPrefix(args[0], "orphan:"); ok {
			pids = findOrphans(comm)
		} else {
			pids = findProcs(args[0])
		}
		if (len(pids) > 0) == want {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("after 10s: host processes holding %q: %v", args[0], pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// findProcs lists the host processes whose arguments hold text's words as
// consecutive whole arguments: scripts run in parallel, and "sleep 3" must
// not find another script's "sleep 3601". The jail's own command line names
// the text too: a process whose first argument is a jail binary is skipped.
func findProcs(text string) []int {
	var pids []int
	want := strings.Fields(text)
	entries, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		args := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
		if filepath.Base(args[0]) == "jail" || filepath.Base(args[0]) == "jail-sh" {
			continue
		}
		if holdsRun(args, want) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// holdsRun says args holds want as consecutive elements.
func holdsRun(args, want []string) bool {
	for i := 0; i+len(want) <= len(args); i++ {
		if slices.Equal(args[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

// findOrphans lists the host processes named comm whose parent is pid 1: a
// run's init stage left behind once its runner is gone. Live runs of other
// scripts have a runner for a parent and are not counted.
func findOrphans(comm string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		open, end := bytes.IndexByte(st, '('), bytes.LastIndexByte(st, ')')
		if open < 0 || end < open {
			continue
		}
		rest := strings.Fields(string(st[end+1:]))
		if string(st[open+1:end]) == comm && len(rest) > 1 && rest[0] != "Z" && rest[1] == "1" {
			pid, _ := strconv.Atoi(e.Name())
			pids = append(pids, pid)
		}
	}
	return pids
}

func chown(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: chown USER PATH...")
	}
	u, err := user.Lookup(args[0])
	ts.Check(err)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, p := range args[1:] {
		ts.Check(filepath.Walk(ts.MkAbs(p), func(path string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(path, uid, gid)
		}))
	}
}

func owner(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: owner UID PATH")
	}
	var st syscall.Stat_t
	ts.Check(syscall.Lstat(ts.MkAbs(args[1]), &st))
	if got := strconv.Itoa(int(st.Uid)); (got == args[0]) == neg {
		ts.Fatalf("%s belongs to uid %s, want %s%s", args[1], got, map[bool]string{true: "not ", false: ""}[neg], args[0])
	}
}

func nocommonlines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: nocommonlines A B")
	}
	a := strings.Split(strings.TrimSpace(ts.ReadFile(args[0])), "\n")
	b := ts.ReadFile(args[1])
	for _, line := range a {
		if strings.Contains("\n"+b+"\n", "\n"+line+"\n") {
			ts.Fatalf("%s and %s share the line %q", args[0], args[1], line)
		}
	}
}

func userdir(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 || neg {
		ts.Fatalf("usage: userdir DIR...")
	}
	for _, d := range args {
		ts.Check(os.MkdirAll(ts.MkAbs(d), 0o755))
		if os.Geteuid() == 0 {
			chown(ts, false, []string{unprivUser, d})
		}
	}
}

// jsonRange checks that a number in a JSON file (a top-level key, or
// several joined by "+", summed) lies in [min, max]:
// jsonrange st.json cpu_user_ms+cpu_system_ms 700 1300
func jsonRange(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 4 {
		ts.Fatalf("usage: jsonrange FILE KEY[+KEY...] MIN MAX")
	}
	var rec map[string]any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &rec))
	sum := 0.0
	for _, k := range strings.Split(args[1], "+") {
		v, ok := rec[k].(float64)
		if !ok {
			ts.Fatalf("%s: %s is not a number: %v", args[0], k, rec[k])
		}
		sum += v
	}
	checkRange(ts, neg, args[1], sum, args[2], args[3])
}

// sizeRange checks that a file's size in bytes lies in [min, max].
func sizeRange(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: sizerange FILE MIN MAX")
	}
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	checkRange(ts, neg, args[0]+"'s size", float64(fi.Size()), args[1], args[2])
}

func checkRange(ts *testscript.TestScript, neg bool, what string, v float64, lo, hi string) {
	min, err := strconv.ParseFloat(lo, 64)
	ts.Check(err)
	max, err := strconv.ParseFloat(hi, 64)
	ts.Check(err)
	in := v >= min && v <= max
	ts.Logf("%s = %v", what, v)
	if in == neg {
		ts.Fatalf("%s = %v; want it %sin [%v, %v]", what, v, map[bool]string{true: "not ", false: ""}[neg], min, max)
	}
}

// hostsLine adds "ADDR NAME" to the host's /etc/hosts for the rest of the
// script (the proxy resolves with the host's resolver): hostsline NAME ADDR.
func hostsLine(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: hostsline NAME ADDR")
	}
	line := args[1] + " " + args[0] + " # jail testscripts\n"
	f, err := os.OpenFile("/etc/hosts", os.O_APPEND|os.O_WRONLY, 0)
	ts.Check(err)
	_, err = f.WriteString(line)
	f.Close()
	ts.Check(err)
	ts.Defer(func() {
		b, err := os.ReadFile("/etc/hosts")
		if err == nil {
			os.WriteFile("/etc/hosts", []byte(strings.Replace(string(b), line, "", 1)), 0o644)
		}
	})
}
