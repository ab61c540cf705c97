package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/jail"
)

// kind is one sort of run an agent platform makes, with the exit statuses
// it may end with when nothing kills it from outside.
type kind struct {
	name   string
	weight int
	argv   func(e *env, i int) []string
	codes  []int
	// closeAfter: the caller reads this many bytes of stdout, then closes
	// its end (a `| head`): the command must end as it would outside.
	closeAfter int
	// killAfter: every run of this kind is SIGKILLed within this window
	// (the allowlist proxy's start), not only the random share.
	killAfter [2]time.Duration
}

// env is what the runs of one caller (root, or the unprivileged user) share.
type env struct {
	jail       string
	workspaces []string // one per worker
	sessions   string   // a session name prefix
	httpPort   int      // a host HTTP server the allowlist runs reach
	cred       *syscall.Credential
	environ    []string
}

func kinds() []kind {
	agent := func(e *env, i int, extra ...string) []string {
		return append([]string{e.jail, "-p", "agent", "--workspace", e.workspaces[i%len(e.workspaces)]}, extra...)
	}
	allow := func(e *env) []string {
		return []string{"--allow", "soak.test:" + strconv.Itoa(e.httpPort), "--pin-host", "soak.test=127.0.0.1"}
	}
	return []kind{
		{name: "echo", weight: 22, codes: []int{0}, argv: func(e *env, i int) []string {
			return agent(e, i, "--", "bash", "-c", "echo $RANDOM > f; cat f")
		}},
		{name: "session", weight: 18, codes: []int{0}, argv: func(e *env, i int) []string {
			return []string{e.jail, "-p", "agent", "--session", fmt.Sprintf("%s%d", e.sessions, i%10), "--",
				"bash", "-c", "echo $RANDOM >> log; tail -n 1 log"}
		}},
		{name: "timeout", weight: 6, codes: []int{137}, argv: func(e *env, i int) []string {
			return agent(e, i, "--time-limit", "1s", "--", "sleep", "5")
		}},
		// A bomb may die out before it reaches the limit: then 0.
		{name: "forkbomb", weight: 8, codes: []int{0, 137}, argv: func(e *env, i int) []string {
			return agent(e, i, "--pids", "32", "--", "bash", "-c", ":(){ :|:& };:; wait")
		}},
		{name: "oom", weight: 6, codes: []int{137}, argv: func(e *env, i int) []string {
			return agent(e, i, "--memory", "32M", "--", "bash", "-c", "head -c 100M /dev/zero | tail")
		}},
		{name: "maxout", weight: 8, codes: []int{0}, argv: func(e *env, i int) []string {
			return agent(e, i, "--max-output", "1K", "--", "bash", "-c", "head -c 5M /dev/zero; yes | head -c 5M >&2")
		}},
		{name: "closed-reader", weight: 6, codes: []int{141}, closeAfter: 10, argv: func(e *env, i int) []string {
			return agent(e, i, "--max-output", "1M", "--", "yes")
		}},
		{name: "allow", weight: 10, codes: []int{0}, argv: func(e *env, i int) []string {
			return append(agent(e, i, allow(e)...), "--", "curl", "-sS", "-m", "5", "-o", "/dev/null",
				"http://soak.test:"+strconv.Itoa(e.httpPort)+"/")
		}},
		{name: "allow-killed", weight: 6, killAfter: [2]time.Duration{30 * time.Millisecond, 150 * time.Millisecond},
			argv: func(e *env, i int) []string {
				return append(agent(e, i, allow(e)...), "--", "bash", "-c",
					"curl -sS -m 5 -o /dev/null http://soak.test:"+strconv.Itoa(e.httpPort)+"/; sleep 600")
			}},
	}
}

// outcome is one run as the caller saw it.
type outcome struct {
	kind   string
	code   int  // 128+N for death by signal N
	killed bool // the caller SIGKILLed it
	took   time.Duration
	hung   bool // its stdout/stderr stayed open after it ended
	bad    string
}

// pick chooses a kind by weight.
func pick(ks []kind, r *rand.Rand) kind {
	total := 0
	for _, k := range ks {
		total += k.weight
	}
	n := r.Intn(total)
	for _, k := range ks {
		if n < k.weight {
			return k
		}
		n -= k.weight
	}
	return ks[len(ks)-1]
}

// runawayAfter is how long a run may take: the longest kind takes 1 s,
// a memory limit's reclaim up to a few more.
const runawayAfter = 30 * time.Second

// hangAfter is how long a caller reading to EOF waits after jail ended: the
// output must be closed by then (no helper of jail may hold it).
const hangAfter = 10 * time.Second

// runOne runs one jail as an agent platform does (stdout and stderr pipes
// read to EOF, as Python's communicate() reads them), SIGKILLing it at
// killAt when that is set.
func runOne(e *env, k kind, i int, killAt time.Duration) outcome {
	o := outcome{kind: k.name, killed: killAt > 0}
	argv := k.argv(e, i)
	argv = append([]string{argv[0], "--status-json", "fd:3"}, argv[1:]...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Args[0] = "jail"
	recR, recW, err := os.Pipe()
	if err != nil {
		o.bad = err.Error()
		return o
	}
	defer recR.Close()
	cmd.ExtraFiles = []*os.File{recW}
	rec := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(recR)
		rec <- b
	}()
	cmd.Env = e.environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: e.cred}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var stdout io.ReadCloser
	if k.closeAfter > 0 {
		var err error
		if stdout, err = cmd.StdoutPipe(); err != nil {
			o.bad = err.Error()
			return o
		}
	} else {
		cmd.Stdout = io.Discard
	}
	cmd.WaitDelay = hangAfter
	start := time.Now()
	err = cmd.Start()
	recW.Close()
	if err != nil {
		o.bad = err.Error()
		return o
	}
	if killAt > 0 {
		t := time.AfterFunc(killAt, func() { cmd.Process.Signal(syscall.SIGKILL) })
		defer t.Stop()
	}
	// No kind runs for long: one still running is a runaway (a closed
	// reader that did not end it, say), ended here so the soak goes on.
	var runaway atomic.Bool
	limit := time.AfterFunc(runawayAfter, func() {
		runaway.Store(true)
		cmd.Process.Signal(syscall.SIGKILL)
	})
	defer limit.Stop()
	if stdout != nil {
		io.ReadFull(stdout, make([]byte, k.closeAfter))
		stdout.Close()
	}
	err = cmd.Wait()
	o.took = time.Since(start)
	var ee *exec.ExitError
	switch {
	case errors.Is(err, exec.ErrWaitDelay):
		o.hung = true
		o.code = cmd.ProcessState.ExitCode()
	case errors.As(err, &ee):
		o.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.code = 128 + int(ws.Signal())
		}
	case err != nil:
		o.bad = err.Error()
	}
	var record []byte
	select {
	case record = <-rec:
	case <-time.After(hangAfter):
		o.hung = true
	}
	switch {
	case runaway.Load():
		o.bad = fmt.Sprintf("still running after %v", runawayAfter)
	case o.code == 125:
		o.bad = "jail failed: " + lastLine(stderr.String())
	case !o.killed && !slices.Contains(k.codes, o.code):
		o.bad = fmt.Sprintf("exit %d, want one of %v: %s", o.code, k.codes, lastLine(stderr.String()))
	case !o.killed:
		o.bad = verdict(record, o.code, stderr.String())
	}
	return o
}

// verdict checks that the status record, the exit status and jail's line
// on stderr tell the same story; "" when they do.
func verdict(record []byte, code int, stderr string) string {
	var r jail.Status
	if err := json.Unmarshal(record, &r); err != nil {
		return fmt.Sprintf("status record: %v: %q", err, record)
	}
	line := func(l string) bool { return strings.Contains(stderr, "jail: killed: "+l) }
	switch {
	case r.ExitCode != code:
		return fmt.Sprintf("the record says exit %d, the caller saw %d", r.ExitCode, code)
	case r.TimedOut && (code != 137 || !line("time limit")):
		return fmt.Sprintf("timed out, exit %d, stderr %q", code, lastLine(stderr))
	case r.PidsLimitHit && (code != 137 || !line("process limit")):
		return fmt.Sprintf("the process limit was hit, exit %d, stderr %q", code, lastLine(stderr))
	case !r.PidsLimitHit && strings.Contains(stderr, "process limit"):
		return fmt.Sprintf("a process limit line, and no pids_limit_hit: %q", lastLine(stderr))
	case r.OOMKilled && !strings.Contains(stderr, "jail: "):
		return fmt.Sprintf("OOM-killed, and no line says so: stderr %q", lastLine(stderr))
	}
	return ""
}

func lastLine(s string) string {
	s = string(bytes.TrimSpace([]byte(s)))
	if i := bytes.LastIndexByte([]byte(s), '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
