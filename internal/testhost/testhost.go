// Package testhost readies this host for jail's own tests and soak: the
// unprivileged user they run jails as, and the cgroup v1 directories root
// delegates to it (as `jail check` tells an admin to). Never used by jail.
package testhost

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// User returns the user name, creating it (no home, no login shell) when
// missing.
func User(name string) (*user.User, error) {
	if _, err := user.Lookup(name); err != nil {
		out, err := exec.Command("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("create user %s: %v: %s", name, err, out)
		}
	}
	return user.Lookup(name)
}

// DelegateCgroups gives u the cgroup v1 directories jail makes its runs'
// cgroups in, /jail/user-UID in each controller's hierarchy, and returns
// the directories it made, deepest last, for the caller to remove. On
// cgroup v2 it does nothing: delegation there is a systemd scope.
func DelegateCgroups(u *user.User) ([]string, error) {
	var st unix.Statfs_t
	if unix.Statfs("/sys/fs/cgroup", &st) != nil || st.Type == unix.CGROUP2_SUPER_MAGIC {
		return nil, nil
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	var made []string
	for _, c := range []string{"memory", "pids", "cpu", "cpuacct"} {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", c)); err != nil {
			continue
		}
		top := filepath.Join("/sys/fs/cgroup", c, "jail")
		dir := filepath.Join(top, "user-"+u.Uid)
		for _, d := range []string{top, dir} {
			if err := os.Mkdir(d, 0o755); err == nil {
				made = append(made, d)
			} else if !os.IsExist(err) {
				return made, fmt.Errorf("delegate cgroups to %s: %w", u.Username, err)
			}
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return made, fmt.Errorf("delegate cgroups to %s: %w", u.Username, err)
		}
	}
	return made, nil
}
