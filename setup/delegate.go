// The delegation step: on cgroup v1 an unprivileged caller's runs get
// their cgroups under /jail/user-UID of each hierarchy jail uses, which only
// root can make and give to the caller (what `jail check` tells root to do
// for such a caller). cgroupfs keeps nothing across a reboot.
package setup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/cgroup"
)

// jailControllers are every controller jail uses; cpuacct only measures.
const jailControllers = cgroup.Memory | cgroup.Pids | cgroup.CPU | cgroup.CPUAcct

// hierarchy is one v1 hierarchy jail uses: its mount point and the
// controllers jail uses on it, by name.
type hierarchy struct {
	mount string
	names []string
}

// hierarchies are the v1 hierarchies of jail's controllers, each once
// (cpu and cpuacct often share one), in controller order.
func hierarchies(h cgroup.Host) []hierarchy {
	var hs []hierarchy
	at := map[string]int{}
	for _, n := range jailControllers.Names() {
		m := h.V1[n]
		if m == "" {
			continue
		}
		if i, ok := at[m]; ok {
			hs[i].names = append(hs[i].names, n)
			continue
		}
		at[m] = len(hs)
		hs = append(hs, hierarchy{mount: m, names: []string{n}})
	}
	return hs
}

// delegation is one directory to make or give: parent /jail (root's) or
// /jail/user-UID (the user's).
type delegation struct {
	dir   string
	uid   int
	mkdir bool   // missing: make it
	where string // the hierarchy's controllers: "cpu,cpuacct"
}

func delegate(h Host, users []int) (Change, error) {
	switch h.Cgroup.Version {
	case cgroup.None:
		return Change{None: "does not apply: this host has no cgroups"}, nil
	case cgroup.V2:
		return Change{None: "does not apply: on cgroup v2 an unprivileged caller's runs go under its own cgroup, which systemd delegates (systemd-run --user --scope -p Delegate=yes jail ...)"}, nil
	}
	var callers []int
	for _, u := range users {
		if u != 0 { // root's runs go under /jail, which they make
			callers = append(callers, u)
		}
	}
	if len(callers) == 0 {
		return Change{None: "no user to delegate to: name them with --user NAME (under sudo, the caller is the default)"}, nil
	}
	hs := hierarchies(h.Cgroup)
	if len(hs) == 0 {
		return Change{None: "does not apply: cgroup v1 has none of the memory, pids, cpu hierarchies"}, nil
	}
	var todo []delegation
	var where []string
	for _, hi := range hs {
		names := strings.Join(hi.names, ",")
		where = append(where, names)
		top := filepath.Join(hi.mount, cgroup.DefaultParent(cgroup.V1, 0))
		missing, err := rootsDir(top)
		if err != nil {
			return Change{}, err
		}
		if missing {
			todo = append(todo, delegation{dir: top, uid: 0, mkdir: true, where: names})
		}
		for _, u := range callers {
			dir := filepath.Join(hi.mount, cgroup.DefaultParent(cgroup.V1, u))
			var st unix.Stat_t
			err := unix.Lstat(dir, &st)
			switch {
			case errors.Is(err, unix.ENOENT):
				todo = append(todo, delegation{dir: dir, uid: u, mkdir: true, where: names})
			case err != nil:
				return Change{}, fmt.Errorf("%s: %w", dir, err)
			case st.Mode&unix.S_IFMT != unix.S_IFDIR:
				return Change{}, fmt.Errorf("%s is not a directory", dir)
			case int(st.Uid) != u:
				todo = append(todo, delegation{dir: dir, uid: u, where: names})
			}
		}
	}
	if len(todo) == 0 {
		return Change{None: "already set: " + describe(callers, " is ", func(int) []string { return where })}, nil
	}
	const lasts = " (until reboot: cgroupfs keeps nothing)"
	changed := describe(callers, " ", func(u int) []string {
		var w []string
		for _, d := range todo {
			if d.uid == u {
				w = append(w, d.where)
			}
		}
		return w
	})
	return Change{
		Would: "make " + changed + lasts,
		Apply: func() (string, error) {
			for _, d := range todo {
				if d.mkdir {
					if err := os.Mkdir(d.dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
						return "", err
					}
				}
				if d.uid != 0 {
					if err := os.Lchown(d.dir, d.uid, -1); err != nil {
						return "", err
					}
				}
			}
			return "made " + changed + lasts, nil
		},
	}, nil
}

// rootsDir checks a hierarchy's /jail: missing, or root's and writable by
// root alone, as root's own runs require (cgroup.Place refuses any other:
// its owner could swap root's run cgroups for its own).
func rootsDir(dir string) (missing bool, err error) {
	var st unix.Stat_t
	err = unix.Lstat(dir, &st)
	switch {
	case errors.Is(err, unix.ENOENT):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("%s: %w", dir, err)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return false, fmt.Errorf("%s is not a directory", dir)
	case st.Uid != 0 || st.Mode&0o022 != 0:
		return false, fmt.Errorf("%s belongs to uid %d or is writable by others (mode %o): its owner could swap root's run cgroups for its own; remove it (it must be empty) or make it root's, mode 0755", dir, st.Uid, st.Mode&0o7777)
	}
	return false, nil
}

// describe says what the callers have, or get, in the hierarchies where
// says: "/jail/user-1000 is uid 1000's in memory, pids, cpu,cpuacct" (is:
// " is ").
func describe(callers []int, is string, where func(uid int) []string) string {
	var each []string
	for _, u := range callers {
		if w := where(u); len(w) > 0 {
			each = append(each, fmt.Sprintf("%s%suid %d's in %s", cgroup.DefaultParent(cgroup.V1, u), is, u, strings.Join(w, ", ")))
		}
	}
	return strings.Join(each, "; ")
}
