// The /proc check: whether the kernel will mount each jail a procfs of its
// own, read from the mount table before any jail is tried.
package preflight

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/moby/sys/mountinfo"
)

// procMount reports whether /proc is whole. A jail mounts a fresh procfs
// for its pid namespace from inside its user namespace, which the kernel
// allows only where a procfs is already fully visible to the caller:
// mounted whole, read-write, with nothing over any part of it but
// permanently empty directories. Container runtimes mask /proc (/dev/null
// over /proc/kcore, a read-only tmpfs over /proc/acpi, read-only binds of
// /proc/sys and others), and then every jail fails at its procfs.
func procMount(h host) Result {
	r := Result{Name: "/proc"}
	if h.mounts == nil {
		r.Skipped = true
		r.Detail = "the mount table could not be read; a jail is tried below"
		return r
	}
	covered, found := procCovers(h.mounts)
	switch {
	case !found:
		r.Detail = "no procfs is mounted here, so the kernel refuses each jail a procfs of its own"
		r.Fixes = []string{"mount one: mount -t proc proc /proc"}
	case covered == nil:
		r.OK = true
		r.Detail = "unmasked: nothing is mounted over the procfs, so each jail may mount one of its own"
	default:
		r.Detail = "masked: " + strings.Join(covered, ", ") + " (as a container runtime masks it), " +
			"so the kernel refuses each jail a procfs of its own"
		r.Fixes = []string{
			"run the container with /proc unmasked: docker run --security-opt systempaths=unconfined " +
				"(podman: --security-opt unmask=ALL; Kubernetes: securityContext.procMount: Unmasked, with hostUsers: false)",
		}
	}
	return r
}

// emptyDirs are the directories of a procfs that are always empty
// (the kernel's is_empty_dir_inode): a mount over one hides nothing, as
// binfmt_misc's at /proc/sys/fs/binfmt_misc.
var emptyDirs = []string{"/sys/fs/binfmt_misc"}

// procCovers finds whether some procfs in mounts is whole (covered nil)
// and, when none is, what covers the one at /proc (or the first one):
// each mount over a part of it, and itself when it is read-only. found is
// false when there is no procfs at all.
func procCovers(mounts []*mountinfo.Info) (covered []string, found bool) {
	children := map[int][]*mountinfo.Info{}
	for _, m := range mounts {
		children[m.Parent] = append(children[m.Parent], m)
	}
	var first []string
	for _, m := range mounts {
		if m.FSType != "proc" || m.Root != "/" {
			continue // a bind of a part of a procfs is not one
		}
		var over []string
		if readOnly(m) {
			over = append(over, m.Mountpoint+" (read-only)")
		}
		for _, c := range children[m.ID] {
			rel := "/" + strings.TrimPrefix(strings.TrimPrefix(c.Mountpoint, m.Mountpoint), "/")
			if !isEmptyDir(rel) {
				over = append(over, c.Mountpoint)
			}
		}
		if len(over) == 0 {
			return nil, true
		}
		sort.Strings(over)
		if !found || m.Mountpoint == "/proc" {
			first = over
		}
		found = true
	}
	return first, found
}

func isEmptyDir(rel string) bool {
	for _, d := range emptyDirs {
		if filepath.Clean(rel) == d {
			return true
		}
	}
	return false
}
