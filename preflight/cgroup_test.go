package preflight

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/cgroup"
)

// TestReadOnlyCgroups: the hierarchies a run needs, read-only as a
// container mounts them, are found by their mount flags; the host's and a
// privileged container's are writable.
func TestReadOnlyCgroups(t *testing.T) {
	v1 := cgroup.Host{Version: cgroup.V1, V1: map[string]string{
		"memory": "/sys/fs/cgroup/memory", "pids": "/sys/fs/cgroup/pids", "cpu": "/sys/fs/cgroup/cpu", "cpuacct": "/sys/fs/cgroup/cpuacct"}}
	v2 := cgroup.Host{Version: cgroup.V2, Unified: "/sys/fs/cgroup"}
	need := cgroup.Memory | cgroup.Pids | cgroup.CPU | cgroup.CPUAcct
	for _, tc := range []struct {
		what, table string
		h           cgroup.Host
		want        []string
	}{
		{"the host", hostV1, v1, nil},
		{"a default container", dockerDefault, v1, []string{"/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct"}},
		{"a privileged container", dockerPrivileged, v1, nil},
		{"a default container on cgroup v2", dockerV2, v2, []string{"/sys/fs/cgroup"}},
		{"a hierarchy read-only by its filesystem's flags", "1 0 0:1 / /sys/fs/cgroup/pids rw - cgroup cgroup ro,pids\n", v1, []string{"/sys/fs/cgroup/pids"}},
		{"the last mount at a place is the one seen", dockerDefault + "700 605 0:36 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n", v1,
			[]string{"/sys/fs/cgroup/memory", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct"}},
	} {
		if got := readOnlyCgroups(host{mounts: mounts(t, tc.table)}, tc.h, need); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.what, got, tc.want)
		}
	}
}

// TestPlaceFailed: Place's refusals as the check says them: root is never
// told to run jail as root; another user on v1 is told how to delegate,
// and that jail setup does it; every one may run without cgroups.
func TestPlaceFailed(t *testing.T) {
	// Another user, on v1, with nothing delegated.
	v1 := cgroup.Host{Version: cgroup.V1, V1: map[string]string{"memory": "/nonexistent/memory", "pids": "/nonexistent/pids", "cpu": "/nonexistent/cpu"}}
	_, err := cgroup.Place(v1, "", 4242, cgroup.Memory|cgroup.Pids|cgroup.CPU)
	if err == nil {
		t.Fatal("placed under /nonexistent")
	}
	detail, fixes := placeFailed(err, cgroup.V1, 4242)
	want := []string{"run jail as root, or have root delegate /jail/user-4242 to uid 4242: for c in memory pids cpu; do mkdir -p /sys/fs/cgroup/$c/jail/user-4242 && chown 4242 /sys/fs/cgroup/$c/jail/user-4242; done (`jail setup --user 4242` as root does it)",
		"or run with --limits-mode best-effort (rlimit stand-ins, reported as such)"}
	if !slices.Equal(fixes, want) || detail != "cgroup v1: /nonexistent/memory/jail does not exist" {
		t.Errorf("uid 4242: %q, %q; want fixes %q", detail, fixes, want)
	}
	// Root where the cgroupfs refuses it (what a container's read-only
	// one said before the check looked at the mount flags).
	for _, tc := range []struct{ err, fix string }{
		{"cgroup v1: uid 0 may not create cgroups in /sys/fs/cgroup/memory; fix: run jail as root",
			"the cgroup filesystem refuses root here: see how it is mounted (grep cgroup /proc/self/mountinfo)"},
		{"cgroup v1 has no pids hierarchy; fix: mount it, or boot with cgroup v2", "mount it, or boot with cgroup v2"},
	} {
		_, fixes := placeFailed(fmt.Errorf("%w: %s", cgroup.ErrUnavailable, tc.err), cgroup.V1, 0)
		if len(fixes) != 2 || fixes[0] != tc.fix || strings.Contains(strings.Join(fixes, "\n"), "run jail as root") {
			t.Errorf("root, %q: %q", tc.err, fixes)
		}
	}
}
