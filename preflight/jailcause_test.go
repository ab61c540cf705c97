package preflight

import (
	"strings"
	"testing"
)

// TestJailCause: each way a jail is known to fail in a container or on a
// host has its own cause and fix, told apart by the failed step's own
// words (the errors below are jail's, as a container gave them); one that
// a check above found is referred to it; anything else gets the general
// advice, never another step's fix.
func TestJailCause(t *testing.T) {
	restrict := procSys(t, map[string]string{"kernel/apparmor_restrict_unprivileged_userns": "1"})
	none := t.TempDir()
	const (
		userns = "create a user namespace (jail check tells why it is refused): Operation not permitted"
		proc   = "proc /proc: mount a procfs for the jail's pid namespace (a container that masks the host's /proc refuses it): Operation not permitted"
		clone  = "bind /usr: clone the source tree: Operation not permitted"
		idmap  = "bind /tmp/jail-check-1: idmap the writable bind so files stay its owner's (the filesystem must support idmapped mounts): Invalid argument"
		keyctl = "join a new session keyring: Operation not permitted"
		// As mount/trees.c words it since it names the filesystem.
		idmapFS = "bind /tmp/jail-check-1: it is on overlayfs (a container's own root filesystem, as a rule), which cannot be idmapped, and jail as root idmaps a writable bind so that what the jail writes there is its owner's; fix: put it on a filesystem that can"
	)
	tmp := probeDir{"/tmp/jail-check-1", "overlayfs"}
	for _, tc := range []struct {
		what  string
		h     host
		a     above
		msg   string
		cause string // its start
		fix   string // in its first fix
	}{
		{"user namespaces, found above", host{euid: 1000, filtered: true, procSys: none}, above{userns: true}, userns,
			"the user namespace the jail is built in is refused (the user namespaces line above)", "as for user namespaces, above"},
		{"user namespaces, not found above", host{euid: 1000, filtered: true, procSys: none}, above{}, userns,
			"the user namespace the jail is built in is refused: this process runs under a seccomp filter", "seccomp=deploy/seccomp-jail.json"},
		{"a masked /proc, found above", host{euid: 1000, procSys: none}, above{proc: true}, proc,
			"the kernel refuses a procfs under a masked /proc (the /proc line above)", "as for /proc, above"},
		{"a procfs refused, not found above", host{euid: 1000, procSys: none}, above{}, proc,
			"the kernel refused the jail a procfs of its own", "systempaths=unconfined"},
		{"root without CAP_SYS_ADMIN", host{euid: 0, filtered: true, procSys: none}, above{}, clone,
			"jail as root clones each bind (open_tree) and idmaps the writable ones, which needs CAP_SYS_ADMIN", "docker run --user 1000"},
		{"an overlayfs that cannot be idmapped", host{euid: 0, capSysAdmin: true, procSys: none}, above{}, idmap,
			"jail as root idmaps each writable bind so that its files stay its owner's, and /tmp/jail-check-1 (under $TMPDIR, where jail check makes its bind) is on overlayfs", "--tmpfs /tmp"},
		{"an overlayfs that cannot be idmapped, named", host{euid: 0, capSysAdmin: true, procSys: none}, above{}, idmapFS,
			"jail as root idmaps each writable bind so that its files stay its owner's, and /tmp/jail-check-1 (under $TMPDIR, where jail check makes its bind) is on overlayfs", "--tmpfs /tmp"},
		{"keyctl refused", host{euid: 0, capSysAdmin: true, filtered: true, procSys: none}, above{}, keyctl,
			"the container's seccomp profile refuses keyctl", "seccomp=deploy/seccomp-jail.json"},
		{"keyctl refused, as jail/init.c words it", host{euid: 1000, filtered: true, procSys: none}, above{},
			"join a new session keyring: a seccomp filter outside jail refuses keyctl (Docker's default profile does); fix: run the container with jail's deploy/seccomp-jail.json",
			"the container's seccomp profile refuses keyctl", "seccomp=deploy/seccomp-jail.json"},
		{"pivot_root refused", host{euid: 1000, filtered: true, procSys: none}, above{}, "pivot_root: Operation not permitted",
			"the container's seccomp profile refuses pivot_root", "seccomp=deploy/seccomp-jail.json"},
		{"the new mount API, found above", host{euid: 1000, filtered: true, procSys: none}, above{mountAPI: true}, "bind /usr: clone the source tree: Function not implemented",
			"a call jail builds the root with is missing or refused (the new mount API line above)", "as for new mount API and openat2, above"},
		{"another sandbox's symlink", host{euid: 1000, filtered: true, procSys: none}, above{},
			"ro-bind /bin on /bin: /bin is a symlink not owned by root: jail follows only root's symlinks in mount sources (a jail could have planted this one); give the path it leads to",
			"an inner jail follows only root's symlinks", "/usr/bin at /bin"},
		{"AppArmor", host{euid: 1000, procSys: restrict}, above{}, "make / private: Permission denied",
			"refused in the jail's user namespace: kernel.apparmor_restrict_unprivileged_userns is 1", "jail setup"},
		{"a filter refusing a step", host{euid: 1000, filtered: true, procSys: none}, above{}, "make / private: Operation not permitted",
			"refused: this process runs under a seccomp filter", "seccomp=deploy/seccomp-jail.json"},
		{"root with CAP_SYS_ADMIN refused a clone, no filter", host{euid: 0, capSysAdmin: true, procSys: none}, above{}, clone,
			"the step named above failed", "jail check as root, or on the host"},
		{"anything else", host{euid: 1000, procSys: none}, above{}, "set hostname jail-check: Invalid argument",
			"the step named above failed", "jail check as root, or on the host"},
	} {
		cause, fixes := jailCause(tc.h, tc.a, tc.msg, tmp)
		if !strings.HasPrefix(cause, tc.cause) || len(fixes) == 0 || !strings.Contains(fixes[0], tc.fix) {
			t.Errorf("%s:\n cause %q\n fixes %q\nwant cause %q..., first fix with %q", tc.what, cause, fixes, tc.cause, tc.fix)
		}
	}
}
