// The kernel's features jail builds with: the new mount API, seccomp,
// Landlock.
package preflight

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/seccomp"
)

// underFilter reports whether this process runs under a seccomp filter
// (/proc/self/status "Seccomp: 2"): in a container, or a jail.
func underFilter() bool {
	b, err := os.ReadFile("/proc/self/status")
	return err == nil && strings.Contains(string(b), "\nSeccomp:\t2")
}

// mountAPI checks for the syscalls jail builds the root with (Linux 5.12+):
// each is called with arguments it must reject; only ENOSYS means missing.
func mountAPI() Result {
	r := Result{Name: "new mount API and openat2"}
	probes := []struct {
		name string
		call func() error
	}{
		{"fsopen", func() error {
			fd, err := unix.Fsopen("", unix.FSOPEN_CLOEXEC)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
		{"open_tree", func() error { _, err := unix.OpenTree(-1, "", 0); return err }},
		{"move_mount", func() error { return unix.MoveMount(-1, "", -1, "", 0) }},
		{"mount_setattr", func() error { return unix.MountSetattr(-1, "", 0, &unix.MountAttr{}) }},
		{"openat2", func() error { _, err := unix.Openat2(-1, "", &unix.OpenHow{}); return err }},
	}
	var missing []string
	for _, p := range probes {
		if errors.Is(p.call(), unix.ENOSYS) {
			missing = append(missing, p.name)
		}
	}
	if len(missing) > 0 {
		r.Detail = "missing: " + strings.Join(missing, ", ")
		r.Fixes = []string{"jail needs Linux 5.12 or newer (mount_setattr); upgrade the kernel"}
		if underFilter() {
			// ENOSYS is also what a filter answers for calls it does
			// not know (Docker's, jail's own default).
			r.Detail += " (or refused: this process runs under a seccomp filter)"
			r.Fixes = []string{"allow them in the outer sandbox's seccomp profile (jail's deploy/seccomp-jail.json does), or upgrade the kernel to 5.12 or newer"}
		}
		return r
	}
	r.OK = true
	r.Detail = "fsopen, open_tree, move_mount, mount_setattr, openat2"
	return r
}

// seccompSupport checks the kernel's filter mode and the linked libseccomp.
func seccompSupport() Result {
	r := Result{Name: "seccomp"}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		r.Detail = fmt.Sprintf("prctl(PR_GET_SECCOMP): %v", err)
		r.Fixes = []string{"the kernel needs CONFIG_SECCOMP and CONFIG_SECCOMP_FILTER"}
		return r
	}
	s, err := seccomp.Probe()
	if err != nil {
		r.Detail = err.Error()
		r.Fixes = []string{"the kernel needs CONFIG_SECCOMP_FILTER"}
		return r
	}
	actions, _ := os.ReadFile("/proc/sys/kernel/seccomp/actions_avail")
	r.OK = true
	r.Detail = fmt.Sprintf("filters available, libseccomp %s, API level %d, actions: %s", s.Library, s.API, strings.TrimSpace(string(actions)))
	return r
}

// landlock reports the Landlock ABI version; jail does not need it yet.
func landlock() Result {
	r := Result{Name: "landlock", Optional: true}
	const createRulesetVersion = 1 << 0
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(nil)), 0, createRulesetVersion)
	switch {
	case errno == 0:
		r.OK = true
		r.Detail = fmt.Sprintf("ABI version %d", v)
	case errno == unix.EOPNOTSUPP:
		r.Detail = "built in but disabled at boot"
		r.Fixes = []string{"add landlock to the lsm= kernel parameter"}
	default:
		r.Detail = fmt.Sprintf("not available: %v", errno)
		r.Fixes = []string{"Landlock needs Linux 5.13+ with CONFIG_SECURITY_LANDLOCK"}
	}
	return r
}
