package jail

// Handing a planned run to the runner: in this process (Exec, the CLI's
// way) or in a child (RunStatus, the library's), through a sealed memfd.
// The handoff's magic and the stage variable are the C headers' (runplan.h,
// stage.h), read through cgo: the runner is their reader.

// #include "jail/runplan.h"
// #include "jail/stage.h"
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/wire"
	"github.com/jail-sandbox/jail/plancache"
)

// The runner's stage variables (entry.c reads them).
const (
	stageRunEnv  = C.JAIL_STAGE_ENV + "run"
	runPlanFDEnv = C.JAIL_RUNPLAN_VAR + "="
)

// Exec hands the run over to the runner, in this very process: the jail
// binary is executed again, and the runner, C that runs before the Go
// runtime, starts and watches the jail; this process's pid, stdio and
// signals stay the caller's. args are jail's own arguments (the command
// follows "--"), statusTo where the status record goes. cache, when not
// nil, are the files the plan came from: the runner then keeps the plan
// for the next invocation with the same args (plancache), unless it holds
// secrets. It returns only if the exec fails.
func (p *Plan) Exec(args []string, statusTo string, started time.Time, cache plancache.Deps) error {
	fd, err := p.memfd(statusTo, started, cache)
	if err != nil {
		return err
	}
	env := append(callerEnv(), stageRunEnv, runPlanFDEnv+strconv.Itoa(fd))
	// Across this exec only: the runner reads and closes it.
	if _, err = unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err == nil {
		err = syscall.Exec("/proc/self/exe", args, env)
	}
	unix.Close(fd)
	return fmt.Errorf("start the runner: %w", err)
}

// callerEnv is jail's environment without any stage variable of jail's own
// a caller may have set: only the ones added here reach the runner.
func callerEnv() []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "_JAIL_") {
			out = append(out, kv)
		}
	}
	return out
}

// memfd puts the hand-over in an in-memory file, sealed so the runner
// knows it for the Go side's own: when jail started, where the status
// record goes, the plan, and what the runner stores with it in the plan
// cache: the files it came from (cache), or nothing when it must not be
// cached.
func (p *Plan) memfd(statusTo string, started time.Time, cache plancache.Deps) (int, error) {
	var deps wire.Writer
	// Never with secrets: they are in the plan's environment, and go
	// nowhere on disk. Deps that cannot be encoded only cost speed.
	if cache == nil || p.secrets || cache.Encode(&deps) != nil {
		deps = wire.Writer{}
	}
	var w wire.Writer
	w.Grow(len(p.Data) + len(statusTo) + deps.Len() + 32)
	w.U32(C.HANDOFF_MAGIC)
	w.U64(monotonic(started))
	w.Str(statusTo)
	w.Bytes(p.Data)
	w.Bytes(deps.Data())
	// Close-on-exec: it holds the plan's environment (secrets too), and
	// a library caller's other children must not inherit it while a jail
	// runs.
	fd, err := unix.MemfdCreate("jail-plan", unix.MFD_ALLOW_SEALING|unix.MFD_CLOEXEC)
	if err == nil {
		_, err = unix.Pwrite(fd, w.Data(), 0)
		if err == nil {
			_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK)
		}
		if err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		return -1, fmt.Errorf("plan memfd: %w", err)
	}
	return fd, nil
}

// monotonic is t on CLOCK_MONOTONIC, in nanoseconds, as the runner reads
// the start time: time.Time hides its monotonic reading.
func monotonic(t time.Time) uint64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano() - int64(time.Since(t)))
}

// Run runs cfg.Argv in a fresh jail as a child of this process and waits:
// for callers that go on afterwards (jail check). The command's stdio are
// this process's; its outcome comes back as the status record.
func Run(cfg Config, started time.Time) (*Result, error) {
	st, err := RunStatus(context.Background(), cfg, PlanOptions{}, Stdio{Stdin: os.Stdin, Stdout: os.Stdout})
	if err != nil {
		return nil, err
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

// Stdio are a run's standard streams; nil is /dev/null.
type Stdio struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// RunStatus runs cfg.Argv in a fresh jail as a child of this process
// (this binary, which links the runner, executed again), with the given
// streams, and returns the whole status record. Cancelling ctx kills the
// jail. A jail that could not be built is a *SetupError, with the record.
func RunStatus(ctx context.Context, cfg Config, opts PlanOptions, stdio Stdio) (*Status, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	plan, err := NewPlan(cfg, opts)
	if err != nil {
		w.Close()
		return nil, err
	}
	fd, err := plan.memfd("fd:3", time.Now(), nil) // a library's run is not cached
	if err != nil {
		w.Close()
		return nil, err
	}
	runPlan := os.NewFile(uintptr(fd), "jail-plan")
	cmd := exec.CommandContext(ctx, "/proc/self/exe", append([]string{"--"}, cfg.Argv...)...)
	cmd.Args[0] = "jail"
	cmd.Stdin, cmd.Stdout = stdio.Stdin, stdio.Stdout
	// Cancelled: SIGTERM, which the runner passes to the command, and
	// the record is written; SIGKILL (the jail dies with the runner) if
	// it is not over in 2 s. Streams the caller gave are let go of then.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 2 * time.Second
	jailErr := &tailBuffer{max: 4096} // jail's own last line, not the command's whole stderr
	cmd.Stderr = jailErr
	if stdio.Stderr != nil {
		cmd.Stderr = io.MultiWriter(stdio.Stderr, jailErr)
	}
	cmd.ExtraFiles = []*os.File{w, runPlan} // fds 3 and 4
	cmd.Env = append(callerEnv(), stageRunEnv, runPlanFDEnv+"4")
	err = cmd.Start()
	w.Close()
	runPlan.Close() // the runner has its own copy now
	if err != nil {
		return nil, fmt.Errorf("start the runner: %w", err)
	}
	var st Status
	decodeErr := json.NewDecoder(r).Decode(&st)
	cmd.Wait()
	if ctx.Err() != nil {
		// Cancelled: the record, when the runner wrote one, says how
		// the jail ended.
		if decodeErr != nil {
			return nil, ctx.Err()
		}
		return &st, ctx.Err()
	}
	if decodeErr != nil {
		return nil, fmt.Errorf("the runner gave no status: %s", lastLine(jailErr.String()))
	}
	if st.ExitCode == 125 && st.Error != "" {
		return &st, &SetupError{Msg: st.Error}
	}
	return &st, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.buf) }

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
