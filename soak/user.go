package main

import (
	"os"
	"strconv"
	"syscall"

	"github.com/jail-sandbox/jail/internal/testhost"
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
	u, err := testhost.User(unprivUser)
	if err != nil {
		return c, undo, err
	}
	c.name = unprivUser
	c.uid, _ = strconv.Atoi(u.Uid)
	c.gid, _ = strconv.Atoi(u.Gid)
	c.cred = &syscall.Credential{Uid: uint32(c.uid), Gid: uint32(c.gid), Groups: []uint32{}}
	made, err := testhost.DelegateCgroups(u)
	undo = func() {
		for i := len(made) - 1; i >= 0; i-- {
			os.Remove(made[i]) // empty by now, or it is a leak the report names
		}
	}
	return c, undo, err
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

// tunOpenTo reports whether c may open /dev/net/tun, which the allowlist
// needs: the node's mode bits for others (0666 where udev made it), or c
// owns it, or c is this process.
func tunOpenTo(c caller) bool {
	var st syscall.Stat_t
	if syscall.Stat("/dev/net/tun", &st) != nil {
		return false
	}
	return c.cred == nil || st.Mode&0o006 == 0o006 || int(st.Uid) == c.uid && st.Mode&0o600 == 0o600
}
