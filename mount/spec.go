// Package mount builds a jail's root filesystem: the parent side plans it from
// the profile's mount list, the init stage (C, before the Go runtime) carries
// the plan out on a fresh tmpfs and pivots into it.
package mount

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Kind says what a Spec puts at its destination.
type Kind int

// The kinds of entry a profile can put in the jail's root.
const (
	Bind         Kind = iota + 1 // a host path, read-write
	ReadOnlyBind                 // a host path, recursively read-only
	Tmpfs                        // a fresh tmpfs
	Proc                         // a procfs of the jail's pid namespace, host-leaking paths masked
	Dev                          // a minimal /dev: null zero full random urandom tty, devpts, shm
	Symlink                      // a symbolic link with the given target
	Dir                          // an empty directory
	File                         // a file with the given content, on the jail's read-only root
)

var kindNames = map[Kind]string{
	Bind: "bind", ReadOnlyBind: "ro-bind", Tmpfs: "tmpfs", Proc: "proc",
	Dev: "dev", Symlink: "symlink", Dir: "dir", File: "file",
}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Spec is one entry of the jail's filesystem, as the profile resolved it.
// Paths are absolute; Src is a host path, Dst a path inside the jail.
type Spec struct {
	Kind     Kind
	Src      string // Bind, ReadOnlyBind: the host path
	Dst      string
	Size     int64  // Tmpfs: bytes, 0 for the kernel's default (half of RAM)
	Mode     uint32 // Tmpfs, Dir, File: permission bits; 0 for the kind's default
	Target   string // Symlink: what the link points to
	Content  []byte // File
	Optional bool   // Bind, ReadOnlyBind: skip, rather than fail, when Src is missing
	// IfMissing (Bind, ReadOnlyBind): what the refusal of a missing Src
	// says to do, where the profile's optional = true is no answer (a
	// workspace); "" names optional = true.
	IfMissing string
	// Over (File): mounted read-only over the file an earlier entry put
	// at Dst (a file inside a read-only bind, say), rather than created
	// on the jail's root; the run fails when nothing is there to cover.
	Over bool
	// Unmasked (Proc): none of runc's masks, for a jail that runs jails.
	Unmasked bool
}

// named names a bind in an error: its kind, source and destination, each
// path quoted when it holds a space or a character that does not print,
// so that "/etc " is not read as /etc.
func (s Spec) named() string {
	return fmt.Sprintf("%s %s on %s", s.Kind, shownPath(s.Src), shownPath(s.Dst))
}

// shownPath is p as an error shows it: quoted where plain text would hide
// what it holds.
func shownPath(p string) string {
	if strings.IndexFunc(p, func(r rune) bool { return r == ' ' || !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(p)
	}
	return p
}
