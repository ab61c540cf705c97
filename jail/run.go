package jail

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"jail/mount"
)

// forwarded are the signals jail passes on to the command (through PID 1)
// instead of dying of them.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// Run runs cfg.Argv in a fresh jail and waits for it. started is when jail
// itself started, for the setup time. A non-nil error is jail's own failure:
// nothing of the command ran, or its jail could not be built as asked. The
// command's own failures, exec ones included, are in the Result.
func Run(cfg Config, started time.Time) (*Result, error) {
	ids, err := callerIDs(&cfg)
	if err != nil {
		return nil, err
	}
	opts := mount.Options{CloneInParent: ids.root}
	if ids.root {
		opts.IDMap = func(uid, gid uint32) (*os.File, error) { return idmapUserns(uid, gid, ids) }
	}
	mounts, err := mount.Prepare(cfg.Mounts, opts)
	if err != nil {
		return nil, err
	}
	defer mounts.Close()
	umask := unix.Umask(0o022)
	unix.Umask(umask)
	plan := encodePlan(&cfg, ids, mounts, uint32(umask))

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)

	runtime.LockOSThread() // Pdeathsig is tied to this thread
	defer runtime.UnlockOSThread()
	c, err := spawn(&cfg, ids, mounts, plan)
	if err != nil {
		return nil, err
	}
	defer c.close()
	mounts.Close()
	return supervise(c, &cfg, started, sigs)
}

// supervise waits for the setup to end and the command to exit, forwarding
// signals and enforcing the wall-time limit meanwhile. It only waits on
// pipes, which Go's poller serves without a thread each: PID 1's status
// pipe reaches EOF when PID 1 is gone, and only then is it reaped.
func supervise(c *child, cfg *Config, started time.Time, sigs <-chan os.Signal) (*Result, error) {
	res := &Result{}
	setup := make(chan []byte, 1)
	go func() {
		line, _ := io.ReadAll(c.errs)
		setup <- line
	}()
	exited := make(chan []byte, 1)
	go func() {
		rec, _ := io.ReadAll(c.status)
		exited <- rec
	}()
	var timeout <-chan time.Time
	if cfg.TimeLimit > 0 {
		t := time.NewTimer(cfg.TimeLimit)
		defer t.Stop()
		timeout = t.C
	}

	var errLine, rec []byte
	for exited != nil {
		select {
		case line := <-setup:
			errLine = line
			res.Setup = time.Since(started)
			setup = nil
		case sig := <-sigs:
			unix.Kill(c.pid, sig.(syscall.Signal))
		case <-timeout:
			// PID 1 dies, and the kernel kills the whole pid
			// namespace with it: daemons and grandchildren too.
			res.TimedOut = true
			unix.Kill(c.pid, unix.SIGKILL)
			timeout = nil
		case rec = <-exited:
			exited = nil
		}
	}
	var ru unix.Rusage
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(c.pid, &ws, 0, &ru); err != unix.EINTR {
			break
		}
	}
	if setup != nil {
		errLine = <-setup
		res.Setup = time.Since(started)
	}
	res.Wall = time.Since(started)
	res.UserCPU = time.Duration(ru.Utime.Nano())
	res.SystemCPU = time.Duration(ru.Stime.Nano())
	if err := initError(errLine); err != nil {
		return nil, err
	}
	if len(errLine) > 0 {
		res.ExecError = strings.TrimSpace(string(errLine[1:]))
	}
	return res, parseStatus(rec, res)
}

// initError turns a setup failure line from the init stage into an error;
// exec failures are not errors of jail's.
func initError(line []byte) error {
	if len(line) == 0 || line[0] != 'E' {
		return nil
	}
	return &SetupError{Msg: strings.TrimSpace(string(line[1:]))}
}

// parseStatus reads PID 1's record of how the command ended. Without one,
// PID 1 was killed: by the time limit, or by something outside.
func parseStatus(rec []byte, res *Result) error {
	if len(rec) != 16 {
		if res.TimedOut {
			res.Signal = int(syscall.SIGKILL)
			res.ExitCode = 128 + res.Signal
			return nil
		}
		return errors.New("the jail's init stage died without a status (killed from outside?)")
	}
	if binary.LittleEndian.Uint32(rec[0:]) != planMagic {
		return fmt.Errorf("the jail's init stage sent a malformed status")
	}
	code := int(int32(binary.LittleEndian.Uint32(rec[8:])))
	if binary.LittleEndian.Uint32(rec[4:]) == 1 {
		res.ExitCode = code
	} else {
		res.Signal = code
		res.ExitCode = 128 + code
	}
	return nil
}
