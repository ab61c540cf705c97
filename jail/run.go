package jail

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The runner's stage variables (init.c reads them).
const (
	stageRunEnv   = "_JAIL_STAGE=run"
	runPlanFDEnv  = "_JAIL_RUNPLAN="
	startedEnvVar = "_JAIL_STARTED="
)

// Exec hands the run over to the runner, in this very process: the jail
// binary is executed again, and the runner, C that runs before the Go
// runtime, starts and watches the jail; this process's pid, stdio and
// signals stay the caller's. args are jail's own arguments (the command
// follows "--"). It returns only if the exec fails.
func (p *Plan) Exec(args []string, started time.Time) error {
	fd, err := p.memfd()
	if err != nil {
		return err
	}
	env := append(os.Environ(), stageRunEnv, runPlanFDEnv+strconv.Itoa(fd), startedEnvVar+monotonic(started))
	err = syscall.Exec("/proc/self/exe", args, env)
	unix.Close(fd)
	return fmt.Errorf("start the runner: %w", err)
}

// memfd puts the plan in an in-memory file the runner reads at start.
func (p *Plan) memfd() (int, error) {
	fd, err := unix.MemfdCreate("jail-plan", 0)
	if err != nil {
		return -1, fmt.Errorf("plan memfd: %w", err)
	}
	if _, err := unix.Pwrite(fd, p.Data, 0); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("plan memfd: %w", err)
	}
	return fd, nil
}

// monotonic is t on CLOCK_MONOTONIC, in nanoseconds, as the runner reads
// the start time: time.Time hides its monotonic reading.
func monotonic(t time.Time) string {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	now := ts.Nano() - int64(time.Since(t))
	return strconv.FormatInt(now, 10)
}

// Run runs cfg.Argv in a fresh jail as a child of this process and waits:
// for callers that go on afterwards (jail check). The command's stdio are
// this process's; its outcome comes back as the status record.
func Run(cfg Config, started time.Time) (*Result, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	plan, err := NewPlan(cfg, PlanOptions{})
	if err != nil {
		w.Close()
		return nil, err
	}
	fd, err := plan.memfd()
	if err != nil {
		w.Close()
		return nil, err
	}
	runPlan := os.NewFile(uintptr(fd), "jail-plan")
	defer runPlan.Close()
	cmd := exec.Command("/proc/self/exe", append([]string{"--status-json", "fd:3", "--"}, cfg.Argv...)...)
	cmd.Args[0] = "jail"
	cmd.Stdin, cmd.Stdout = os.Stdin, os.Stdout
	cmd.ExtraFiles = []*os.File{w, runPlan} // fds 3 and 4
	cmd.Env = append(os.Environ(), stageRunEnv, runPlanFDEnv+"4", startedEnvVar+monotonic(started))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		return nil, fmt.Errorf("start the runner: %w", err)
	}
	var st Status
	decodeErr := json.NewDecoder(r).Decode(&st)
	cmd.Wait()
	if decodeErr != nil {
		return nil, fmt.Errorf("the runner gave no status: %s", bytes.TrimSpace(stderr.Bytes()))
	}
	if st.ExitCode == 125 && st.Error != "" {
		return nil, &SetupError{Msg: st.Error}
	}
	res := &Result{
		ExitCode: st.ExitCode, Signal: st.Signal, TimedOut: st.TimedOut,
		Wall: fromMS(st.WallMS), Setup: fromMS(st.SetupMS),
		UserCPU: fromMS(st.UserCPUMS), SystemCPU: fromMS(st.SystemCPUMS),
	}
	if st.ExitCode == 126 || st.ExitCode == 127 {
		res.ExecError = st.Error
	}
	return res, nil
}

func fromMS(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
