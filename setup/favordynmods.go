// The favordynmods step: on cgroup v1, moving a process into a cgroup
// waits for an RCU grace period when the machine was idle, which jail pays
// on every run it moves into its cgroup. Mounting any cgroup hierarchy with
// favordynmods switches the kernel's (global) cgroup rwsem to the mode
// that does not wait, until reboot; v1 cannot remount an existing
// hierarchy with it, so the step mounts a named one of its own.
package setup

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/cgroup"
)

// favorOptions mount a named hierarchy with no controllers: it holds no
// process and limits nothing; only its favordynmods flag matters.
const favorOptions = "none,name=favordynmods,favordynmods"

// FavorDynModsCommand is the step by hand, for `jail check` to show.
func FavorDynModsCommand(dir string) string {
	return fmt.Sprintf("mkdir -p %s && mount -t cgroup -o %s cgroup %s", dir, favorOptions, dir)
}

// FavorDynModsOn is where a cgroup hierarchy is mounted with favordynmods,
// by the mount table in the file mountinfo; "" when none is.
func FavorDynModsOn(mountinfoFile string) (string, error) {
	f, err := os.Open(mountinfoFile)
	if err != nil {
		return "", fmt.Errorf("read the mount table: %w", err)
	}
	defer f.Close()
	mounts, err := mountinfo.GetMountsFromReader(f, func(m *mountinfo.Info) (skip, stop bool) {
		return m.FSType != "cgroup" && m.FSType != "cgroup2", false
	})
	if err != nil {
		return "", fmt.Errorf("read the mount table: %w", err)
	}
	for _, m := range mounts {
		if strings.Contains(","+m.VFSOptions+",", ",favordynmods,") {
			return m.Mountpoint, nil
		}
	}
	return "", nil
}

func favorDynMods(h Host) (Change, error) {
	switch h.Cgroup.Version {
	case cgroup.None:
		return Change{None: "does not apply: this host has no cgroups"}, nil
	case cgroup.V2:
		return Change{None: "does not apply: on cgroup v2 each run starts inside its cgroup (CLONE_INTO_CGROUP), which waits for nothing"}, nil
	}
	on, err := FavorDynModsOn(h.Mountinfo)
	if err != nil {
		return Change{}, err
	}
	if on != "" {
		return Change{None: "already on (" + on + "): moving a run into its cgroup does not wait for an RCU grace period"}, nil
	}
	const scope = "global (every cgroup on this host: forks and exits get a little slower) and lasts until reboot"
	return Change{
		Would: "switch on: " + FavorDynModsCommand(h.FavorDir) + "; " + scope,
		Apply: func() (string, error) {
			if err := os.MkdirAll(h.FavorDir, 0o755); err != nil {
				return "", err
			}
			if err := h.MountCgroup(h.FavorDir, favorOptions); err != nil {
				hint := ""
				if errors.Is(err, unix.EINVAL) {
					hint = " (Linux before 6.0 does not know favordynmods)"
				}
				return "", fmt.Errorf("mount -t cgroup -o %s cgroup %s: %w%s", favorOptions, h.FavorDir, err, hint)
			}
			if on, err := FavorDynModsOn(h.Mountinfo); err != nil || on == "" {
				return "", fmt.Errorf("mounted %s, but the mount table shows no favordynmods (%v)", h.FavorDir, err)
			}
			return "switched on: mounted a named cgroup v1 hierarchy with favordynmods at " + h.FavorDir +
				"; moving a run into its cgroup no longer waits for an RCU grace period; " + scope, nil
		},
	}, nil
}
