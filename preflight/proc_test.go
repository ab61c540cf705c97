package preflight

import (
	"slices"
	"strings"
	"testing"
)

// TestProcCovers: a procfs is whole when nothing but an always-empty
// directory's mount is over it (the host; a container with
// systempaths=unconfined); a container's default masks, a read-only
// procfs or a mount over /proc itself leave none whole; a whole one
// elsewhere is enough, as it is for the kernel.
func TestProcCovers(t *testing.T) {
	for _, tc := range []struct {
		what, table string
		found       bool
		covered     []string
	}{
		{"the host, binfmt_misc over its empty directory", hostV1, true, nil},
		{"a container with systempaths=unconfined", dockerUnmasked, true, nil},
		{"a container's default masks", dockerDefault, true, []string{"/proc/acpi", "/proc/bus", "/proc/fs", "/proc/irq",
			"/proc/kcore", "/proc/keys", "/proc/scsi", "/proc/sys", "/proc/sysrq-trigger"}},
		{"a read-only procfs", "1 0 0:1 / / rw - ext4 /dev/vda rw\n2 1 0:2 / /proc ro,nosuid - proc proc rw\n", true,
			[]string{"/proc (read-only)"}},
		{"something over /proc itself", "1 0 0:1 / / rw - ext4 /dev/vda rw\n2 1 0:2 / /proc rw - proc proc rw\n3 2 0:3 / /proc rw - tmpfs tmpfs rw\n",
			true, []string{"/proc"}},
		{"a masked /proc and a whole procfs elsewhere", dockerDefault + "700 600 0:52 / /host/proc rw,nosuid - proc proc rw\n", true, nil},
		{"a bind of a part of a procfs is not one", "1 0 0:1 / / rw - ext4 /dev/vda rw\n2 1 0:2 /sys /proc rw - proc proc rw\n", false, nil},
		{"no procfs", "1 0 0:1 / / rw - ext4 /dev/vda rw\n", false, nil},
	} {
		covered, found := procCovers(mounts(t, tc.table))
		if found != tc.found || !slices.Equal(covered, tc.covered) {
			t.Errorf("%s: %q, %v; want %q, %v", tc.what, covered, found, tc.covered, tc.found)
		}
	}
}

// TestProcMount: the line for each, and its fix.
func TestProcMount(t *testing.T) {
	r := procMount(host{mounts: mounts(t, dockerDefault)})
	if r.OK || !strings.HasPrefix(r.Detail, "masked: /proc/acpi, ") || len(r.Fixes) != 1 ||
		!strings.Contains(r.Fixes[0], "docker run --security-opt systempaths=unconfined") {
		t.Errorf("masked: %+v", r)
	}
	if r := procMount(host{mounts: mounts(t, dockerUnmasked)}); !r.OK || !strings.HasPrefix(r.Detail, "unmasked") {
		t.Errorf("unmasked: %+v", r)
	}
	if r := procMount(host{mounts: mounts(t, "1 0 0:1 / / rw - ext4 /dev/vda rw\n")}); r.OK || !strings.HasPrefix(r.Detail, "no procfs") {
		t.Errorf("no procfs: %+v", r)
	}
}
