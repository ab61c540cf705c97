package mount

// The mount section of a run plan: Prepare resolves and checks every mount
// against the host (sources, guarded paths, what to copy, what a root
// caller's runner clones) and Encode writes the ops the init stage carries
// out (root.c). The op codes (MOP_*) and bind flags (MBIND_*) are mount.h's,
// read here through cgo: the init stage is their reader.

// #include "mount/mount.h"
import "C"

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/wire"
)

// Options says who clones the bind sources, and which host paths no
// writable bind may reach.
type Options struct {
	// Root is set when the caller is root: the jail then runs as an
	// unprivileged host uid that may not be able to reach the sources, so
	// the runner, still root, clones each source tree (Trees) and hands it
	// over. Writable ones are idmapped from their owner to the jail's host
	// ids: the jail works on the owner's files as its own, and what it
	// creates there belongs to the owner on the host.
	Root bool
	// WriteAs is set when the caller is root without CAP_SYS_ADMIN (Root
	// false): the jail, as these host ids, opens its binds itself, and
	// nothing is idmapped. A writable bind must then be theirs, as an
	// idmapped one is to the jail: what the jail writes there is its
	// owner's, and no file of another's is changed as if the jail's.
	WriteAs *Owner
	// Protected are host paths a writable bind may not reach: jail's own
	// state (the plan cache), cgroupfs, the audit log's directory.
	Protected []Guard
}

// Guard is a host path no writable bind may be or hold, nor, unless
// InsideOK, lie in.
type Guard struct {
	Path string
	What string // what it is, for the message: "jail's own state"
	// InsideOK lets a bind lie in Path: it cannot write Path itself
	// (the audit log's directory: a workspace next to the log is fine).
	InsideOK bool
}

// Owner is a host uid and gid.
type Owner struct{ UID, GID uint32 }

// Writable is a writable bind: its canonical source on the host, and
// where the jail sees it.
type Writable struct{ Src, Dst string }

// Tree is a bind source the runner clones for a root caller.
type Tree struct {
	Path     string // canonical
	ReadOnly bool
	// IDMap: idmapped from Owner (uid, gid) to the jail's host ids.
	IDMap    bool
	UID, GID uint32
}

// Prepared is the mount part of one run's plan: the ops for the init stage
// and the trees cloned by the parent, which the init stage gets as fds.
type Prepared struct {
	ops      wire.Writer
	nops     uint32
	rootSize uint64
	// Trees are the sources the runner clones, in fd order (root callers).
	Trees []Tree
	// Writable are the writable binds: the only disk-backed places the
	// jail can write, which the disk limit and reserve watch.
	Writable []Writable
	// Deps are the host paths the plan was made from, each as lstat saw
	// it (nil: absent): the plan stays right while they stay the same.
	Deps map[string]fs.FileInfo
}

// Prepare checks the specs against the host and turns them into ops: it
// orders them parents first, resolves and checks every bind source (a
// missing one fails the run unless optional), and, for root callers, lists
// the source trees the runner is to clone.
func Prepare(specs []Spec, opts Options) (_ *Prepared, err error) {
	specs, err = ordered(specs)
	if err != nil {
		return nil, err
	}
	p := &Prepared{rootSize: 1 << 20}
	r := newResolver(specs)
	for _, s := range specs {
		if err := p.add(r, s, opts); err != nil {
			return nil, err
		}
	}
	p.Deps = make(map[string]fs.FileInfo, len(r.seen))
	for path, res := range r.seen {
		p.Deps[path] = res.fi
	}
	return p, nil
}

// Size is about how many bytes Encode writes.
func (p *Prepared) Size() int { return p.ops.Len() + 12 }

// Encode appends the mount section's body: root size, op count, ops.
func (p *Prepared) Encode(w *wire.Writer) {
	w.U64(p.rootSize)
	w.U32(p.nops)
	w.Raw(p.ops.Data())
}

// ordered validates the specs and sorts them parents first (stable), so a
// mount never hides one made before it under the same path. A file mounted
// over another comes after every other entry of its depth: the one that
// puts the covered file there, at Dst or above, is then always before it.
func ordered(specs []Spec) ([]Spec, error) {
	out := make([]Spec, len(specs))
	copy(out, specs)
	seen := make(map[string]bool, len(out))
	covered := make(map[string]bool)
	for _, s := range out {
		if err := checkPath(s.Dst); err != nil {
			return nil, fmt.Errorf("%s %s: %w", s.Kind, s.Dst, err)
		}
		at := seen
		if s.Over {
			if s.Kind != File {
				return nil, fmt.Errorf("%s %s: only a file can be mounted over what is there", s.Kind, s.Dst)
			}
			at = covered
		}
		if at[s.Dst] {
			return nil, fmt.Errorf("%s %s: two mounts at the same path", s.Kind, s.Dst)
		}
		at[s.Dst] = true
	}
	sort.SliceStable(out, func(i, j int) bool {
		di, dj := depth(out[i].Dst), depth(out[j].Dst)
		return di < dj || di == dj && !out[i].Over && out[j].Over
	})
	if err := checkCovers(out); err != nil {
		return nil, err
	}
	return out, checkNesting(out)
}

// checkCovers refuses a file mounted over nothing: the entry nearest at or
// above its path must be a bind (which may hold the file) or a file at the
// same path. Whether the file is really there is known only in the jail
// (root.c fails the run then).
func checkCovers(specs []Spec) error {
	for _, s := range specs {
		if !s.Over {
			continue
		}
		var near *Spec
		for i := range specs {
			m := &specs[i]
			if m.Over || (m.Dst != s.Dst && !under(s.Dst, m.Dst)) {
				continue
			}
			if near == nil || depth(m.Dst) > depth(near.Dst) {
				near = m
			}
		}
		switch {
		case near == nil:
			return fmt.Errorf("%s %s: nothing there to cover: no bind before it holds that path", s.Kind, s.Dst)
		case near.Kind == Bind || near.Kind == ReadOnlyBind || (near.Kind == File && near.Dst == s.Dst):
		default:
			return fmt.Errorf("%s %s: nothing there to cover: the %s at %s holds no file of the plan", s.Kind, s.Dst, near.Kind, near.Dst)
		}
	}
	return nil
}

func checkPath(p string) error {
	switch {
	case !filepath.IsAbs(p):
		return errors.New("not an absolute path")
	case p == "/":
		return errors.New("cannot replace the jail's root")
	case filepath.Clean(p) != p:
		return errors.New("not a clean path (no .., //, trailing /)")
	case strings.ContainsRune(p, 0):
		return errors.New("NUL in path")
	}
	return nil
}

func depth(p string) int { return strings.Count(p, "/") }

// under reports whether p is strictly below dir.
func under(p, dir string) bool { return strings.HasPrefix(p, dir+"/") }

// checkNesting refuses files, directories and symlinks placed inside a bind,
// proc or dev mount: they would be written into a host directory, or fail.
func checkNesting(specs []Spec) error {
	for _, s := range specs {
		// A file mounted over another belongs inside a mount: it
		// covers a file that mount shows, writing nothing into it.
		if s.Over || (s.Kind != File && s.Kind != Dir && s.Kind != Symlink) {
			continue
		}
		for _, m := range specs {
			if under(s.Dst, m.Dst) && m.Kind != Tmpfs && m.Kind != Dir {
				return fmt.Errorf("%s %s: inside the %s mount at %s; put it on the jail's root or a tmpfs", s.Kind, s.Dst, m.Kind, m.Dst)
			}
		}
	}
	return nil
}

func (p *Prepared) add(r *resolver, s Spec, opts Options) error {
	w := &p.ops
	switch s.Kind {
	case Bind, ReadOnlyBind:
		return p.addBind(r, s, opts)
	case Tmpfs:
		w.U32(C.MOP_TMPFS)
		w.U64(uint64(s.Size))
		w.U32(modeOr(s.Mode, 0o1777))
		w.Str(s.Dst)
	case Proc:
		w.U32(C.MOP_PROC)
		w.Str(s.Dst)
		if s.Unmasked {
			w.Strs(nil)
			w.Strs(nil)
			w.Strs(nil)
			break
		}
		w.Strs(procMaskedFiles)
		w.Strs(procMaskedDirs)
		w.Strs(procReadOnly)
	case Dev:
		w.U32(C.MOP_DEV)
		w.Str(s.Dst)
		w.Strs(devNodes)
	case Symlink:
		p.addSymlink(s.Target, s.Dst)
		return nil
	case Dir:
		w.U32(C.MOP_DIR)
		w.U32(modeOr(s.Mode, 0o755))
		w.Str(s.Dst)
	case File:
		if s.Over {
			p.addFileOver(s.Dst, modeOr(s.Mode, 0o644), s.Content)
			return nil
		}
		p.addFile(s.Dst, modeOr(s.Mode, 0o644), s.Content)
		return nil
	default:
		return fmt.Errorf("mount %s: unknown kind %v", s.Dst, s.Kind)
	}
	p.nops++
	return nil
}

func (p *Prepared) addFile(dst string, mode uint32, content []byte) {
	p.addContent(C.MOP_FILE, dst, mode, content)
}

// addFileOver plans a file mounted over the one at dst. Its content lives
// on the jail's root tmpfs, unnamed (root.c).
func (p *Prepared) addFileOver(dst string, mode uint32, content []byte) {
	p.addContent(C.MOP_FILE_OVER, dst, mode, content)
}

// addContent plans an op that carries a file's content (MOP_FILE,
// MOP_FILE_OVER, same fields): it lives on the jail's root tmpfs, so the
// root's size counts it.
func (p *Prepared) addContent(op uint32, dst string, mode uint32, content []byte) {
	p.ops.U32(op)
	p.ops.U32(mode)
	p.ops.Bytes(content)
	p.ops.Str(dst)
	p.rootSize += uint64(len(content)) + 4096
	p.nops++
}

// copyMax bounds the read-only files copied into the jail's root instead
// of bound: a bind costs about ten syscalls to make and more to tear down,
// a small copy one write; the ld.so cache, nsswitch.conf and their kind are
// all under it.
const copyMax = 64 << 10

// copyable reports whether a read-only bind of fi may be a copy instead:
// a small regular file anyone may read, so that the jail sees the same
// bytes, read-only, that the bind would have shown it.
func copyable(fi fs.FileInfo) bool {
	return fi.Mode().IsRegular() && fi.Size() <= copyMax && fi.Mode().Perm()&0o004 != 0
}

// readSmall reads a file to copy, refusing a symlink swapped in since it
// was resolved; ok is false when the copy is not possible and a bind must
// do.
func readSmall(path string) ([]byte, bool) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !copyable(fi) {
		return nil, false
	}
	b := make([]byte, fi.Size()+1) // one read past the end proves it is all
	n, err := io.ReadFull(f, b)
	return b[:n], err == io.ErrUnexpectedEOF && int64(n) == fi.Size()
}

func (p *Prepared) addSymlink(target, dst string) {
	p.ops.U32(C.MOP_SYMLINK)
	p.ops.Str(target)
	p.ops.Str(dst)
	p.nops++
}

func modeOr(m, def uint32) uint32 {
	if m == 0 {
		return def
	}
	return m & 0o7777
}

// addBind resolves a bind source. A source that is itself a symlink into
// another bind of the same path (merged /usr: /lib -> usr/lib) becomes the
// same symlink in the jail rather than a second mount. Otherwise the source
// is made canonical here, following only symlinks owned by root: a jail, or
// any other user, can plant links of its own owner only (what a jail writes
// belongs to an unprivileged uid, see ownerMap). The init stage then opens
// the canonical path refusing any symlink, so a link swapped in after this
// point fails the run instead of redirecting it.
func (p *Prepared) addBind(r *resolver, s Spec, opts Options) error {
	if strings.ContainsRune(s.Src, 0) || !filepath.IsAbs(s.Src) {
		return fmt.Errorf("%s %s: source %q is not an absolute path", s.Kind, s.Dst, s.Src)
	}
	if s.Src == s.Dst {
		if target, ok := r.mirroredLink(s.Src); ok {
			p.addSymlink(target, s.Dst)
			return nil
		}
	}
	canon, fi, err := r.resolve(s.Src)
	if err != nil {
		if s.Optional && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if s.IfMissing != "" && errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: source does not exist: %s", s.named(), s.IfMissing)
		}
		return fmt.Errorf("%s: %w", s.named(), unwrapPath(err))
	}
	// Copied in by this process; not where the jail opens its binds itself
	// as its host ids (WriteAs: root without CAP_SYS_ADMIN), since root
	// here may read what those ids may not.
	if s.Kind == ReadOnlyBind && copyable(fi) && r.onRoot(s.Dst) && opts.WriteAs == nil {
		if content, ok := readSmall(canon); ok {
			p.addFile(s.Dst, 0o444, content)
			return nil
		}
	}
	var flags uint32
	if s.Kind == ReadOnlyBind {
		flags |= C.MBIND_RO
	}
	if !fi.IsDir() {
		flags |= C.MBIND_FILE
	}
	if s.Kind == Bind {
		if err := protect(canon, fi, opts.Protected); err != nil {
			return fmt.Errorf("%s: %w", s.named(), err)
		}
		if err := ownedBy(fi, opts.WriteAs); err != nil {
			return fmt.Errorf("%s: %w", s.named(), err)
		}
		if opts.WriteAs != nil {
			flags |= C.MBIND_OWN // and again once PID 1 has it open
		}
		p.Writable = append(p.Writable, Writable{Src: canon, Dst: s.Dst})
	}
	var fdIndex uint32
	if opts.Root {
		tree := Tree{Path: canon, ReadOnly: s.Kind == ReadOnlyBind}
		if s.Kind == Bind {
			if tree.UID, tree.GID, err = owner(fi); err != nil {
				return fmt.Errorf("%s: %w", s.named(), err)
			}
			tree.IDMap = true
		}
		flags |= C.MBIND_FD
		fdIndex = uint32(len(p.Trees))
		p.Trees = append(p.Trees, tree)
	}
	w := &p.ops
	w.U32(C.MOP_BIND)
	w.U32(flags)
	w.Str(canon)
	w.U32(fdIndex)
	w.Str(s.Dst)
	p.nops++
	return nil
}
