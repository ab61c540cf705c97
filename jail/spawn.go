package jail

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"jail/mount"
)

// stageEnv is the init stage's entry marker (JAIL_STAGE_ENV in stage.h):
// the only variable the re-executed binary gets.
const stageEnv = "_JAIL_STAGE="

// child is the jail as the parent sees it: its PID 1 and the pipes to it.
type child struct {
	pid    int      // PID 1 of the jail, a child of this process
	plan   *os.File // write end, held open for the jail's life: when jail dies the jail sees EOF
	errs   *os.File // the init stage's error line, EOF once the command is exec'd
	status *os.File // PID 1's status record
}

// pipes are the ends spawn makes; the child's ends are closed once the
// init stage has its copies.
type pipes struct {
	planR, planW, errR, errW, statusR, statusW, syncR, syncW *os.File
}

func newPipes() (*pipes, error) {
	p := &pipes{}
	for _, pair := range []struct{ r, w **os.File }{
		{&p.planR, &p.planW}, {&p.errR, &p.errW}, {&p.statusR, &p.statusW}, {&p.syncR, &p.syncW},
	} {
		var err error
		if *pair.r, *pair.w, err = os.Pipe(); err != nil {
			p.close()
			return nil, fmt.Errorf("pipe: %w", err)
		}
	}
	return p, nil
}

func (p *pipes) close() {
	for _, f := range []*os.File{p.planR, p.planW, p.errR, p.errW, p.statusR, p.statusW, p.syncR, p.syncW} {
		if f != nil {
			f.Close()
		}
	}
}

// spawn starts the jail; plan is framed for the pipe (encodePlan). This binary is re-executed as the init stage
// (init.c) with a plain vfork: no namespaces yet, which is what lets Go use
// vfork, the cheap way. The init stage creates its user namespace, this
// process writes the id maps (only it may), then sends the plan; the init
// stage creates the other namespaces and forks PID 1 of a new pid namespace
// as a child of this process, tells its pid and exits. The caller must hold
// its OS thread locked until PID 1 is reaped: PID 1's death signal is tied
// to the thread that forked.
func spawn(cfg *Config, ids hostIDs, mounts *mount.Prepared, plan []byte) (_ *child, err error) {
	p, err := newPipes()
	if err != nil {
		return nil, err
	}
	c := &child{plan: p.planW, errs: p.errR, status: p.statusR}
	stage := -1
	defer func() {
		// The init stage has its own copies of these ends.
		for _, f := range []*os.File{p.planR, p.errW, p.statusW, p.syncW, p.syncR} {
			f.Close()
		}
		if err != nil {
			c.close() // an init stage waiting for the plan sees EOF and exits
		}
		if stage > 0 {
			reap(stage)
		}
	}()

	files := []uintptr{0, 1, 2, p.planR.Fd(), p.errW.Fd(), p.statusW.Fd(), p.syncW.Fd()}
	for _, t := range mounts.Trees {
		files = append(files, t.Fd())
	}
	stage, err = syscall.ForkExec("/proc/self/exe", []string{"jail"}, &syscall.ProcAttr{
		Env:   []string{stageEnv + "init"},
		Files: files,
		Sys:   &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return nil, fmt.Errorf("start the init stage: %w", err)
	}
	p.syncW.Close() // so that reads see EOF if the init stage dies

	var ready [1]byte
	if _, err := io.ReadFull(p.syncR, ready[:]); err != nil || ready[0] != 'U' {
		return nil, stageFailed(c.errs, "create the user namespace")
	}
	if err := writeMaps(stage, cfg, ids); err != nil {
		return nil, err
	}
	// The plan goes in once the maps are written: reading it is the init
	// stage's barrier. From a goroutine: the pipe may hold less than the
	// plan (a caller over its pipe-buffer quota gets 4 KiB pipes), and
	// only the init stage reading frees room. Nothing waits for it: should
	// the init stage die before reading it all, the write fails, and the
	// init stage is seen gone.
	go p.planW.Write(plan)

	var pid1 [4]byte
	if _, err := io.ReadFull(p.syncR, pid1[:]); err != nil {
		return nil, stageFailed(c.errs, "start PID 1 of the jail")
	}
	c.pid = int(binary.LittleEndian.Uint32(pid1[:]))
	return c, nil
}

// writeMaps gives the init stage's user namespace its one uid and one gid:
// the command's ids inside, the caller's (or, for root, the unprivileged
// host ids) outside.
func writeMaps(pid int, cfg *Config, ids hostIDs) error {
	dir := fmt.Sprintf("/proc/%d/", pid)
	write := func(name, content string) error {
		if err := os.WriteFile(dir+name, []byte(content), 0); err != nil {
			return fmt.Errorf("write the jail's %s: %w", name, err)
		}
		return nil
	}
	if !ids.root {
		// Unprivileged: the kernel maps a gid only once setgroups is
		// denied for good, so the jail can never drop a group.
		if err := write("setgroups", "deny"); err != nil {
			return err
		}
	}
	if err := write("uid_map", fmt.Sprintf("%d %d 1\n", cfg.UID, ids.uid)); err != nil {
		return err
	}
	return write("gid_map", fmt.Sprintf("%d %d 1\n", cfg.GID, ids.gid))
}

// stageFailed is the init stage's own account of why it stopped, or what
// the parent was waiting for when it did.
func stageFailed(errs io.Reader, waiting string) error {
	line, _ := io.ReadAll(io.LimitReader(errs, 4096))
	if len(line) > 1 && line[0] == 'E' {
		return &SetupError{Msg: strings.TrimSpace(string(line[1:]))}
	}
	return errors.New("the init stage died before it could " + waiting)
}

// reap waits for the init stage, which exits once PID 1 runs.
func reap(pid int) {
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			return
		}
	}
}

func (c *child) close() {
	c.plan.Close()
	c.errs.Close()
	c.status.Close()
}
