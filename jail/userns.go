package jail

// The user namespace: who the jail is on the host. A jail never runs as
// host root: an unprivileged caller's jail is that caller; a root caller's
// jail is Config.HostUID/HostGID, and each writable bind is idmapped so that
// the jail works on its owner's files, and what it writes there is the
// owner's (never root's: mount.Prepare refuses root-owned writable binds).
// Root without CAP_SYS_ADMIN (a container's root, as a rule) can neither
// clone nor idmap a bind: its jail is still HostUID/HostGID, built as that
// unprivileged user's would be, opening its binds as it.
// The runner writes the maps and makes the idmap namespaces (userns.c);
// this side only decides the ids and the path.

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// hostIDs are the host uid and gid the jail's single mapped id stands for,
// and the path jail takes to build the jail as them.
type hostIDs struct {
	uid, gid uint32
	// root: the caller is root; the runner maps the jail to uid, gid
	// (RUN_ROOT) and the command drops root's supplementary groups.
	root bool
	// clone: the runner clones the bind sources, idmapping writable ones
	// (root with CAP_SYS_ADMIN). A root caller without it sets
	// RUN_NO_ADMIN instead: the jail opens its binds itself, as uid.
	clone bool
	// ptrace: root with CAP_SYS_PTRACE, whose runner reads every count of
	// the jail's in /proc (the disk limit: diskwatch.c).
	ptrace bool
}

func callerIDs(cfg *Config) (hostIDs, error) {
	if os.Geteuid() != 0 {
		return hostIDs{uid: uint32(os.Geteuid()), gid: uint32(os.Getegid())}, nil
	}
	if cfg.HostUID == 0 || cfg.HostGID == 0 {
		return hostIDs{}, errors.New("user.host_uid and user.host_gid must not be 0: a jail never runs as host root")
	}
	eff, err := effectiveCaps()
	if err != nil {
		return hostIDs{}, err
	}
	ids := hostIDs{uid: cfg.HostUID, gid: cfg.HostGID, root: true, clone: eff&capBit(unix.CAP_SYS_ADMIN) != 0,
		ptrace: eff&capBit(unix.CAP_SYS_PTRACE) != 0}
	// Mapping the jail to other ids than root's own takes CAP_SETUID and
	// CAP_SETGID; mapping it to root itself is what jail never does.
	if !ids.clone && eff&(capBit(unix.CAP_SETUID)|capBit(unix.CAP_SETGID)) != capBit(unix.CAP_SETUID)|capBit(unix.CAP_SETGID) {
		return hostIDs{}, fmt.Errorf("jail as root needs CAP_SYS_ADMIN (to clone and idmap the jail's binds), or at least CAP_SETUID and CAP_SETGID "+
			"(to build the jail as uid %d, user.host_uid, would), and this root has neither; fix: run jail as a non-root user "+
			"(docker run --user 1000), or keep CAP_SETUID and CAP_SETGID (Docker's default does)", cfg.HostUID)
	}
	return ids, nil
}

// effectiveCaps is this process's effective capability set, in its own
// user namespace: what the root path is decided by, never the uid alone.
// The plan cache keys on the same set (plancache/key.c), so a plan made
// with one set is never replayed with another.
func effectiveCaps() (uint64, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return 0, fmt.Errorf("read this process's capabilities: %w", err)
	}
	return uint64(data[0].Effective) | uint64(data[1].Effective)<<32, nil
}

func capBit(c int) uint64 { return 1 << uint(c) }
