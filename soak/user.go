package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// caller is who runs a phase's jails: root, or an unprivileged user.
type caller struct {
	name     string
	uid, gid int
	cred     *syscall.Credential // nil: this process's own
}

// unprivUser is the unprivileged caller, made when missing (as make test's
// suite makes it).
const unprivUser = "tester"

// unprivileged returns the unprivileged caller, creating the user when
// missing, and on cgroup v1 the cgroup directories root delegates to it
// (jail check says how); undo removes the ones it made.
func unprivileged() (c caller, undo func(), err error) {
	undo = func() {}
	if _, err := user.Lookup(unprivUser); err != nil {
		out, err := exec.Command("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", unprivUser).CombinedOutput()
		if err != nil {
			return c, undo, fmt.Errorf("create user %s: %v: %s", unprivUser, err, out)
		}
	}
	u, err := user.Lookup(unprivUser)
	if err != nil {
		return c, undo, err
	}
	c.name = unprivUser
	c.uid, _ = strconv.Atoi(u.Uid)
	c.gid, _ = strconv.Atoi(u.Gid)
	c.cred = &syscall.Credential{Uid: uint32(c.uid), Gid: uint32(c.gid), Groups: []uint32{}}
	var made []string
	undo = func() {
		for i := len(made) - 1; i >= 0; i-- {
			os.Remove(made[i]) // empty by now, or it is a leak the report names
		}
	}
	for _, ctrl := range []string{"memory", "pids", "cpu", "cpuacct"} {
		top := filepath.Join("/sys/fs/cgroup", ctrl, "jail")
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", ctrl)); err != nil {
			continue
		}
		dir := filepath.Join(top, "user-"+u.Uid)
		for _, d := range []string{top, dir} {
			if err := os.Mkdir(d, 0o755); err == nil {
				made = append(made, d)
			} else if !os.IsExist(err) {
				return c, undo, fmt.Errorf("delegate %s: %w", d, err)
			}
		}
		if err := os.Chown(dir, c.uid, c.gid); err != nil {
			return c, undo, fmt.Errorf("delegate %s: %w", dir, err)
		}
	}
	return c, undo, nil
}

// ownedDir makes dir (mode 0700 or 0755) owned by c.
func ownedDir(dir string, mode os.FileMode, c caller) error {
	if err := os.MkdirAll(dir, mode); err != nil {
		return err
	}
	if err := os.Chmod(dir, mode); err != nil {
		return err
	}
	return os.Chown(dir, c.uid, c.gid)
}
