package preflight

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// cgroupControllers are the controllers jail's limits use.
var cgroupControllers = []string{"memory", "pids", "cpu"}

// cgroups reports the cgroup version and whether this caller can create
// cgroups with the controllers jail limits with.
func cgroups() Result {
	r := Result{Name: "cgroups", Optional: true}
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil {
		r.Detail = fmt.Sprintf("/sys/fs/cgroup: %v", err)
		r.Fix = "mount the cgroup filesystem at /sys/fs/cgroup"
		return r
	}
	if st.Type == unix.CGROUP2_SUPER_MAGIC {
		return cgroupV2(r)
	}
	return cgroupV1(r)
}

func cgroupV1(r Result) Result {
	var missing, readOnly []string
	for _, c := range cgroupControllers {
		dir := "/sys/fs/cgroup/" + c
		if _, err := os.Stat(dir); err != nil {
			missing = append(missing, c)
		} else if unix.Access(dir, unix.W_OK) != nil {
			readOnly = append(readOnly, c)
		}
	}
	kind := "v1"
	var st unix.Statfs_t
	if unix.Statfs("/sys/fs/cgroup/unified", &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		kind = "v1 (hybrid: controllers on v1, an empty v2 at /sys/fs/cgroup/unified)"
	}
	switch {
	case len(missing) > 0:
		r.Detail = fmt.Sprintf("%s, controllers missing: %s", kind, strings.Join(missing, " "))
		r.Fix = "mount the missing v1 controllers, or boot with cgroup v2 (systemd.unified_cgroup_hierarchy=1)"
	case len(readOnly) > 0:
		r.Detail = fmt.Sprintf("%s, this caller cannot create cgroups under %s", kind, strings.Join(readOnly, " "))
		r.Fix = "run jail as root, or give this user a writable /sys/fs/cgroup/<controller>/jail directory"
	default:
		r.OK = true
		r.Detail = fmt.Sprintf("%s; this caller can create cgroups with %s", kind, strings.Join(cgroupControllers, " "))
	}
	return r
}

func cgroupV2(r Result) Result {
	own := ownCgroupV2()
	dir := filepath.Join("/sys/fs/cgroup", own)
	avail, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	have := strings.Fields(string(avail))
	var missing []string
	for _, c := range cgroupControllers {
		if !contains(have, c) {
			missing = append(missing, c)
		}
	}
	switch {
	case len(missing) > 0:
		r.Detail = fmt.Sprintf("v2; controllers not delegated to %s: %s", dir, strings.Join(missing, " "))
		r.Fix = "run jail as root, or in a delegated scope: systemd-run --user --scope -p Delegate=yes jail ..."
	case unix.Access(dir, unix.W_OK) != nil:
		r.Detail = fmt.Sprintf("v2; this caller cannot create cgroups in %s", dir)
		r.Fix = "run jail as root, or in a delegated scope: systemd-run --user --scope -p Delegate=yes jail ..."
	default:
		r.OK = true
		r.Detail = fmt.Sprintf("v2; this caller can create cgroups in %s with %s", dir, strings.Join(cgroupControllers, " "))
	}
	return r
}

// ownCgroupV2 is this process's cgroup on the unified hierarchy.
func ownCgroupV2() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "/"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p
		}
	}
	return "/"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
