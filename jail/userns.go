package jail

// The user namespace: who the jail is on the host. A jail never runs as
// host root: an unprivileged caller's jail is that caller; a root caller's
// jail is Config.HostUID/HostGID, and each writable bind is idmapped so that
// the jail works on its owner's files, and what it writes there is the
// owner's (never root's: mount.Prepare refuses root-owned writable binds).
// The runner writes the maps and makes the idmap namespaces (userns.c);
// this side only decides the ids.

import (
	"errors"
	"os"
)

// hostIDs are the host uid and gid the jail's single mapped id stands for.
type hostIDs struct {
	uid, gid uint32
	root     bool // the caller is root: the runner clones the bind sources
}

func callerIDs(cfg *Config) (hostIDs, error) {
	if os.Geteuid() != 0 {
		return hostIDs{uid: uint32(os.Geteuid()), gid: uint32(os.Getegid())}, nil
	}
	if cfg.HostUID == 0 || cfg.HostGID == 0 {
		return hostIDs{}, errors.New("user.host_uid and user.host_gid must not be 0: a jail never runs as host root")
	}
	return hostIDs{uid: cfg.HostUID, gid: cfg.HostGID, root: true}, nil
}
