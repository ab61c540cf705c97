package jail

import (
	"encoding/binary"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"jail/mount"
)

// stageEnv is the init stage's entry marker (JAIL_STAGE_ENV in stage.h):
// the only variable the re-executed binary gets.
const stageEnv = "_JAIL_STAGE="

// namespaces are the ones every jail gets, without exception.
const namespaces = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
	syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWCGROUP

// initCaps are what the init stage needs in the jail's user namespace, and
// only there: mounts, pivot_root and hostname (SYS_ADMIN), loopback up
// (NET_ADMIN), and dropping the bounding set and locking securebits
// (SETPCAP). The command gets none.
var initCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}

// child is the init stage as the parent sees it.
type child struct {
	pid    int
	plan   *os.File // write end, held open for the jail's life: when jail dies the jail sees EOF
	errs   *os.File // the init stage's error line, EOF once the command is exec'd
	status *os.File // PID 1's status record
}

// spawn re-executes this binary as the init stage in fresh namespaces and
// sends it the plan. The caller must hold its OS thread locked until the
// child is reaped: Pdeathsig fires when the thread that forked exits.
func spawn(cfg *Config, ids hostIDs, mounts *mount.Prepared, plan []byte) (_ *child, err error) {
	planR, planW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("plan pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		planR.Close()
		planW.Close()
		return nil, fmt.Errorf("error pipe: %w", err)
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		planR.Close()
		planW.Close()
		errR.Close()
		errW.Close()
		return nil, fmt.Errorf("status pipe: %w", err)
	}
	c := &child{plan: planW, errs: errR, status: statusR}
	defer func() {
		// The child has its own copies of these ends.
		planR.Close()
		errW.Close()
		statusW.Close()
		if err != nil {
			c.close()
		}
	}()

	// The plan goes into the pipe as the init stage starts, so it finds it
	// there at once. From a goroutine: the pipe may hold less than the
	// plan (a caller over its pipe-buffer quota gets 4 KiB pipes), and
	// only the init stage reading frees room.
	// Nothing waits for it: should the init stage die before reading it
	// all, the write fails, and supervise sees the init stage gone.
	msg := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(plan)), uint32(len(plan)))
	msg = append(msg, plan...)
	go planW.Write(msg)

	uids, gids := ids.maps(cfg)
	files := []uintptr{0, 1, 2, planR.Fd(), errW.Fd(), statusW.Fd()}
	for _, t := range mounts.Trees {
		files = append(files, t.Fd())
	}
	// syscall.ForkExec rather than os.StartProcess: the latter probes for
	// pidfd support with an extra fork on every first use, that is, on
	// every run of jail.
	c.pid, err = syscall.ForkExec("/proc/self/exe", []string{"jail"}, &syscall.ProcAttr{
		Env:   []string{stageEnv + "init"},
		Files: files,
		Sys: &syscall.SysProcAttr{
			Cloneflags:  namespaces,
			UidMappings: uids,
			GidMappings: gids,
			// Root may drop its supplementary groups (setgroups to
			// none, below); an unprivileged caller may not touch
			// them at all, which the kernel requires for its map.
			GidMappingsEnableSetgroups: ids.root,
			Credential:                 &syscall.Credential{Uid: cfg.UID, Gid: cfg.GID, NoSetGroups: !ids.root},
			AmbientCaps:                initCaps,
			Pdeathsig:                  syscall.SIGKILL,
			Setsid:                     true,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("create namespaces and start the init stage: %w", hintNamespaces(err))
	}
	return c, nil
}

func (c *child) close() {
	c.plan.Close()
	c.errs.Close()
	c.status.Close()
}

// hintNamespaces adds the usual cause to a refused clone.
func hintNamespaces(err error) error {
	if os.IsPermission(err) || err == syscall.EPERM || err == syscall.ENOSPC || err == syscall.EINVAL {
		return fmt.Errorf("%w (user namespaces refused: run `jail check` for the cause and the fix)", err)
	}
	return err
}
