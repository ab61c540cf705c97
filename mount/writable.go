package mount

// Who a writable bind may be: its owner, whose ids the jail writes it as
// (idmapped for root, as them for root without CAP_SYS_ADMIN), and never a
// path jail guards (its state, the audit log), by name or by identity.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// owner is who a root caller's writable bind is idmapped from. A bind
// owned by root is refused: what the jail wrote there would be root's on
// the host, and a setuid program it left would run as root for anyone.
func owner(fi fs.FileInfo) (uid, gid uint32, err error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, errors.New("cannot tell who owns the source")
	}
	if st.Uid == 0 || st.Gid == 0 {
		return 0, 0, fmt.Errorf("owned by root (uid %d, gid %d): what the jail writes there would be root's on the host; chown it to an unprivileged user, whose files the jail's become", st.Uid, st.Gid)
	}
	return st.Uid, st.Gid, nil
}

// ownedBy refuses a writable bind that is not want's (nil: no check), for
// a root caller without CAP_SYS_ADMIN, whose jail writes it as want with
// no idmap.
func ownedBy(fi fs.FileInfo, want *Owner) error {
	if want == nil {
		return nil
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return errors.New("cannot tell who owns the source")
	}
	if st.Uid == want.UID && st.Gid != 0 {
		return nil
	}
	alt := ""
	if st.Uid != 0 && st.Gid != 0 {
		alt = fmt.Sprintf(", or set user.host_uid = %d and user.host_gid = %d (its owner's)", st.Uid, st.Gid)
	}
	return fmt.Errorf("owned by uid %d, gid %d, and the jail writes it as uid %d (user.host_uid), never in root's group: jail as root "+
		"without CAP_SYS_ADMIN (a container's root, as a rule) cannot idmap it to its owner; fix: chown it to %d:%d%s, or run jail as a non-root user",
		st.Uid, st.Gid, want.UID, want.UID, want.GID, alt)
}

// protect refuses a writable bind that is, holds or (unless the guard
// allows it) lies in a guarded path, by name and by identity: the same
// directory can have other names (a bind mount elsewhere on the host,
// /var/run for /run).
func protect(canon string, fi fs.FileInfo, guards []Guard) error {
	for _, g := range guards {
		p := g.Path
		refuse := func() error { return fmt.Errorf("would let the jail write %s, %s", p, g.What) }
		if canon == p || under(p, canon) || (!g.InsideOK && under(canon, p)) {
			return refuse()
		}
		// The source is p or holds it: p or one of its parents.
		for a := p; ; a = filepath.Dir(a) {
			if same(a, fi) {
				return refuse()
			}
			if a == "/" {
				break
			}
		}
		if g.InsideOK {
			continue
		}
		// The source lies in p: p is the source or one of its parents.
		if pfi, err := os.Stat(p); err == nil {
			for a := canon; ; a = filepath.Dir(a) {
				if afi, err := os.Stat(a); err == nil && os.SameFile(afi, pfi) {
					return refuse()
				}
				if a == "/" {
					break
				}
			}
		}
	}
	return nil
}

// same reports whether path is the file fi describes.
func same(path string, fi fs.FileInfo) bool {
	pfi, err := os.Stat(path)
	return err == nil && os.SameFile(pfi, fi)
}
