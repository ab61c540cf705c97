package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/internal/stats"
)

// launcher is one way of running the target: a name and a full argv whose
// first element is an absolute path; Env is added to the bench's own
// environment and Dir is the working directory ("" the bench's).
type launcher struct {
	Name string
	Argv []string
	Env  []string
	Dir  string
}

// caller launches commands one at a time and times them. The child's stdin
// and stdout are /dev/null; its stderr goes to an unlinked temporary file
// (as cheap for the child as /dev/null) so that a failure can be reported
// with what the command said.
type caller struct {
	timeout time.Duration
	stderr  *os.File
}

// newCaller returns a caller that kills a call after timeout.
func newCaller(timeout time.Duration) (*caller, error) {
	f, err := os.CreateTemp("", "jail-bench-stderr-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // the open descriptor keeps it; nothing left behind
	return &caller{timeout: timeout, stderr: f}, nil
}

// Close releases the caller's stderr file.
func (c *caller) Close() error { return c.stderr.Close() }

// call runs l once and returns the wall time from just before Start to the
// return of Wait. A start failure, a non-zero exit, a signal or a timeout is
// an error naming the command and quoting its stderr.
func (c *caller) call(l launcher) (time.Duration, error) {
	if err := c.resetStderr(); err != nil {
		return 0, err
	}
	cmd := exec.Command(l.Argv[0], l.Argv[1:]...)
	cmd.Stderr = c.stderr // stdin and stdout stay nil: /dev/null
	cmd.Dir = l.Dir
	if len(l.Env) > 0 {
		cmd.Env = append(os.Environ(), l.Env...) // later entries win
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("%s: %s: %w", l.Name, shellQuote(l.Argv), err)
	}
	var timedOut atomic.Bool
	timer := time.AfterFunc(c.timeout, func() {
		timedOut.Store(true)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // its whole group
	})
	err := cmd.Wait()
	elapsed := time.Since(start)
	timer.Stop()

	if timedOut.Load() {
		err = fmt.Errorf("timed out after %v, killed", c.timeout)
	}
	if err != nil {
		return elapsed, c.failure(l, err)
	}
	return elapsed, nil
}

// resetStderr empties the stderr file before a call.
func (c *caller) resetStderr() error {
	if err := c.stderr.Truncate(0); err != nil {
		return fmt.Errorf("stderr file: %w", err)
	}
	if _, err := c.stderr.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("stderr file: %w", err)
	}
	return nil
}

// failure builds the error for a failed call of l, with its stderr.
func (c *caller) failure(l launcher, err error) error {
	buf := make([]byte, 4096)
	n, _ := c.stderr.ReadAt(buf, 0)
	msg := strings.TrimSpace(string(buf[:n]))
	if msg == "" {
		msg = "(empty)"
	}
	return fmt.Errorf("%s failed: %v\n  command: %s\n  stderr: %s",
		l.Name, err, shellQuote(l.Argv), strings.ReplaceAll(msg, "\n", "\n          "))
}

// measureLatency runs the launchers in turn (one call each, round-robin) for
// warmup rounds, whose times are dropped, then n rounds, and returns each
// launcher's n samples in the launchers' order.
func measureLatency(c *caller, ls []launcher, warmup, n int) ([][]time.Duration, error) {
	samples := make([][]time.Duration, len(ls))
	for round := range warmup + n {
		for i, l := range ls {
			d, err := c.call(l)
			if err != nil {
				return nil, err
			}
			if round >= warmup {
				samples[i] = append(samples[i], d)
			}
		}
	}
	return samples, nil
}

// Throughput is how many calls one launcher completed with all workers
// busy, summed over its rounds.
type Throughput struct {
	Launcher  string  `json:"launcher"`
	Rounds    int     `json:"rounds"`
	Calls     int     `json:"calls"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"calls_per_second"`
}

// measureThroughput runs rounds of bursts, one per launcher in turn (jail,
// bwrap, jail, bwrap, …), each keeping one call per caller in flight for d,
// and returns the summed figures in the launchers' order.
func measureThroughput(cs []*caller, ls []launcher, rounds int, d time.Duration) ([]Throughput, error) {
	res := make([]Throughput, len(ls))
	for i, l := range ls {
		res[i].Launcher = l.Name
	}
	for range rounds {
		for i, l := range ls {
			calls, elapsed, err := burst(cs, l, d)
			if err != nil {
				return nil, err
			}
			res[i].Rounds++
			res[i].Calls += calls
			res[i].Seconds += elapsed.Seconds()
		}
	}
	for i := range res {
		res[i].PerSecond = stats.Ratio(float64(res[i].Calls), res[i].Seconds)
	}
	return res, nil
}

// burst has every caller launch l back to back until d has passed, and
// returns the calls completed and the time until the last one ended.
func burst(cs []*caller, l launcher, d time.Duration) (int, time.Duration, error) {
	var (
		stop   atomic.Bool
		wg     sync.WaitGroup
		counts = make([]int, len(cs))
		errs   = make([]error, len(cs))
	)
	start := time.Now()
	deadline := start.Add(d)
	for w, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() && time.Now().Before(deadline) {
				if _, err := c.call(l); err != nil {
					errs[w] = err
					stop.Store(true)
					return
				}
				counts[w]++
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	total := 0
	for w := range cs {
		if errs[w] != nil {
			return 0, 0, errs[w]
		}
		total += counts[w]
	}
	return total, elapsed, nil
}
