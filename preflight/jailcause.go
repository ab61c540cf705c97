// Why a probe jail failed: its error names the step that failed (the
// runner's and the init stage's own words), and each step that containers
// and hosts are known to refuse has its own cause and fix.
package preflight

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/setup"
)

// probeDir is the probe jail's writable bind: a directory under $TMPDIR,
// and its filesystem's name.
type probeDir struct{ path, fs string }

// jailCause is the cause of a probe jail's failure with message msg, and
// the fixes. A step that a check above already found refused is referred
// to it; the rest are told apart by the step's words and the errno's.
func jailCause(h host, a above, msg string, tmp probeDir) (string, []string) {
	// Go's errno strings are C's strerror's, lower-cased.
	has := func(s string) bool { return strings.Contains(strings.ToLower(msg), strings.ToLower(s)) }
	eperm := has(unix.EPERM.Error()) || has(unix.EACCES.Error())
	root := h.euid == 0
	switch {
	case has("create a user namespace") && a.userns:
		return "the user namespace the jail is built in is refused (the user namespaces line above)",
			[]string{"as for user namespaces, above"}
	case has("create a user namespace"):
		var whys, fixes []string
		for _, c := range usernsCauses(h, unix.EPERM) {
			whys = append(whys, c.why)
			fixes = append(fixes, c.fix)
		}
		return "the user namespace the jail is built in is refused: " + strings.Join(whys, "; "), fixes
	case has("mount a procfs") && a.proc:
		return "the kernel refuses a procfs under a masked /proc (the /proc line above)",
			[]string{"as for /proc, above"}
	case has("mount a procfs"):
		return "the kernel refused the jail a procfs of its own: something not in this mount table covers part of /proc, or a security module refuses it",
			[]string{"run the container with /proc unmasked: docker run --security-opt systempaths=unconfined"}
	case has(unix.ENOSYS.Error()) && a.mountAPI:
		return "a call jail builds the root with is missing or refused (the new mount API line above)",
			[]string{"as for new mount API and openat2, above"}
	case has("clone the source") && root && eperm && !h.capSysAdmin:
		return "jail as root clones each bind (open_tree) and idmaps the writable ones, which needs CAP_SYS_ADMIN, and this root has not got it (a container's root)",
			[]string{
				"run jail as a non-root user: docker run --user 1000 (or USER 1000 in the image)",
				"or give the container CAP_SYS_ADMIN (docker run --cap-add SYS_ADMIN) with jail's seccomp profile (--security-opt seccomp=deploy/seccomp-jail.json)",
			}
	case has("idmap the writable bind"), has("cannot be idmapped"):
		return fmt.Sprintf("jail as root idmaps each writable bind so that its files stay its owner's, and %s (under $TMPDIR, where jail check makes its bind) is on %s, which cannot be idmapped (a container's overlayfs root cannot)", tmp.path, tmp.fs),
			[]string{
				"put the workspace on a volume (docker run -v DIR:/workspace) and $TMPDIR on a tmpfs (docker run --tmpfs /tmp), where idmapped mounts work",
				"or run jail as a non-root user, whose writable binds need no idmapped mount",
			}
	case has("session keyring") && (eperm || has("refuses keyctl")):
		return "the container's seccomp profile refuses keyctl, which gives each jail a session keyring of its own (Docker's default profile does, even with CAP_SYS_ADMIN)",
			[]string{seccompJailFix}
	case has("pivot_root") && eperm && h.filtered:
		return "the container's seccomp profile refuses pivot_root (Docker's default profile does, even with CAP_SYS_ADMIN)",
			[]string{seccompJailFix}
	case has("is a symlink not owned by root"):
		return "an inner jail follows only root's symlinks, and this one is another's (inside another jail, the outer jail's own)",
			[]string{"give the outer sandbox the host's own directory there, or bind its target (/usr/bin at /bin) in the outer sandbox's profile"}
	case eperm && !root && setup.RestrictsUserns(h.procSys):
		return "refused in the jail's user namespace: " + appArmorWhy, []string{appArmorFix}
	case eperm && h.filtered:
		return "refused: this process runs under a seccomp filter, which may refuse this step",
			[]string{seccompJailFix, "or run jail on the host"}
	}
	return "the step named above failed",
		[]string{"run jail check as root, or on the host, to tell this caller's rights from the host's; the README's \"Running on a fleet\" lists what a container must give"}
}

// fsName names the filesystem dir is on, for the messages.
func fsName(dir string) string {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return "a filesystem jail could not name"
	}
	names := map[int64]string{
		unix.OVERLAYFS_SUPER_MAGIC: "overlayfs", unix.TMPFS_MAGIC: "tmpfs", unix.EXT4_SUPER_MAGIC: "ext4",
		unix.XFS_SUPER_MAGIC: "xfs", unix.BTRFS_SUPER_MAGIC: "btrfs", unix.NFS_SUPER_MAGIC: "nfs",
		unix.FUSE_SUPER_MAGIC: "a FUSE filesystem", unix.V9FS_MAGIC: "9p", 0x2fc12fc1: "zfs", 0x61756673: "aufs",
	}
	if n, ok := names[int64(st.Type)]; ok {
		return n
	}
	return fmt.Sprintf("a filesystem of type %#x", st.Type)
}
