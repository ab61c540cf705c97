package jail

// The user namespace: who the jail is on the host. A jail never runs as
// host root: an unprivileged caller's jail is that caller; a root caller's
// jail is Config.HostUID/HostGID, and each writable bind is idmapped so that
// the jail works on its owner's files, and what it writes there is the
// owner's (never root's: mount.Prepare refuses root-owned writable binds).

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// hostIDs are the host uid and gid the jail's single mapped id stands for.
type hostIDs struct {
	uid, gid uint32
	root     bool // the caller is root: sources are cloned by the parent
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

// idmapUserns returns a user namespace that maps a bind's owner (uid, gid)
// to the jail's host ids, to idmap the bind through. A user namespace only
// lives as long as something holds it, so a throw-away process (the
// "userns" stage of init.c) holds it while the parent opens it.
func idmapUserns(uid, gid uint32, h hostIDs) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("idmap user namespace: %w", err)
	}
	defer r.Close()
	defer w.Close()
	proc, err := os.StartProcess("/proc/self/exe", []string{"jail"}, &os.ProcAttr{
		Env:   []string{stageEnv + "userns"},
		Files: []*os.File{r, nil, nil},
		Sys: &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: int(uid), HostID: int(h.uid), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: int(gid), HostID: int(h.gid), Size: 1}},
			Pdeathsig:   syscall.SIGKILL,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("idmap user namespace: start holder: %w", err)
	}
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/user", proc.Pid))
	w.Close() // the holder exits as soon as it sees EOF
	if _, werr := proc.Wait(); err == nil && werr != nil {
		err = werr
	}
	if err != nil {
		return nil, fmt.Errorf("idmap user namespace: %w", err)
	}
	return ns, nil
}
