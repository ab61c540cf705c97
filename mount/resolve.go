package mount

// Resolving a plan's host paths: symlinks followed only where root owns
// them, each lstat remembered for the one Prepare, and where a destination
// lands in the jail.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// resolver resolves the host paths of one Prepare, remembering each lstat:
// the same few directories (/etc, /usr) lead to most sources.
type resolver struct {
	specs []Spec
	seen  map[string]lstatResult
}

type lstatResult struct {
	fi  fs.FileInfo
	err error
}

func newResolver(specs []Spec) *resolver {
	return &resolver{specs: specs, seen: map[string]lstatResult{}}
}

func (r *resolver) lstat(path string) (fs.FileInfo, error) {
	res, ok := r.seen[path]
	if !ok {
		res.fi, res.err = os.Lstat(path)
		r.seen[path] = res
	}
	return res.fi, res.err
}

// resolve is filepath.EvalSymlinks that follows only symlinks owned by
// root; it also returns what the path leads to.
func (r *resolver) resolve(path string) (string, fs.FileInfo, error) {
	resolved := "/"
	fi, err := r.lstat(resolved)
	rest := strings.Split(strings.TrimPrefix(filepath.Clean(path), "/"), "/")
	for links := 0; len(rest) > 0 && err == nil; {
		name := rest[0]
		rest = rest[1:]
		if name == "" || name == "." {
			continue
		}
		if name == ".." {
			resolved = filepath.Dir(resolved)
			fi, err = r.lstat(resolved)
			continue
		}
		next := filepath.Join(resolved, name)
		if fi, err = r.lstat(next); err != nil {
			break
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != 0 {
			return "", nil, fmt.Errorf("%s is a symlink not owned by root: jail follows only root's symlinks in mount sources (a jail could have planted this one); give the path it leads to", next)
		}
		if links++; links > 40 {
			return "", nil, &fs.PathError{Op: "resolve", Path: path, Err: unix.ELOOP}
		}
		target, rerr := os.Readlink(next)
		if rerr != nil {
			return "", nil, rerr
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		fi, err = r.lstat(resolved)
		rest = append(strings.Split(target, "/"), rest...)
	}
	if err != nil {
		return "", nil, err
	}
	return resolved, fi, nil
}

// onRoot reports whether dst lands on the jail's own root tmpfs, which is
// read-only once built, rather than inside another mount.
func (r *resolver) onRoot(dst string) bool {
	for _, m := range r.specs {
		if m.Kind != Dir && m.Kind != Symlink && m.Kind != File && under(dst, m.Dst) {
			return false
		}
	}
	return true
}

// mirroredLink reports whether src is a symlink that resolves into a bind
// putting a host directory at its own path in the jail, so the link itself
// works there; it returns the link's text.
func (r *resolver) mirroredLink(src string) (string, bool) {
	if fi, err := r.lstat(src); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return "", false
	}
	canon, _, err := r.resolve(src)
	if err != nil {
		return "", false
	}
	for _, m := range r.specs {
		if (m.Kind != Bind && m.Kind != ReadOnlyBind) || m.Src != m.Dst || m.Src == src {
			continue
		}
		if canon != m.Src && !under(canon, m.Src) {
			continue
		}
		if mc, _, err := r.resolve(m.Src); err == nil && mc == m.Src {
			target, err := os.Readlink(src)
			return target, err == nil
		}
	}
	return "", false
}

// unwrapPath drops the *PathError wrapper, whose path the caller names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, fs.ErrNotExist) {
			return errors.New("source does not exist (optional = true skips a missing source)")
		}
		return pe.Err
	}
	return err
}
