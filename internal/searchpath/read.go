package searchpath

// Reading: one file, refused unless it is a regular file of a sane size
// that only the caller or root can change, and noted as a dependency.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// maxFileSize bounds a file, so "-p /dev/zero" fails rather than reading
// forever.
const maxFileSize = 1 << 20

// Read reads a file (kind says what: "profile", "seccomp policy", "OCI
// seccomp profile"), which problems will call name, and notes what it
// depends on: the path as lstat sees it and, through a symlink, the file
// itself. Both are taken before the read: a change made while it reads
// shows as a change later, rather than being recorded as what was read.
func (f Finder) Read(path, name, kind string) (Source, error) {
	if f.Files != nil {
		abs, _ := filepath.Abs(path)
		lfi, lerr := os.Lstat(abs)
		if lerr == nil || errors.Is(lerr, fs.ErrNotExist) {
			f.Files[abs] = lfi
		}
		if lfi != nil && lfi.Mode()&fs.ModeSymlink != 0 {
			if real, rerr := filepath.EvalSymlinks(abs); rerr == nil {
				rfi, _ := os.Lstat(real)
				f.Files[real] = rfi
			}
		}
	}
	return readSource(path, name, kind)
}

// readSource reads one file, refusing anything too large to be one, and,
// as ssh does with its configuration, one that someone other than the
// caller or root owns or can write.
func readSource(path, name, kind string) (Source, error) {
	// Anything but a regular file is refused before it is opened (a
	// device's open may do something); O_NONBLOCK and the check after
	// the open cover a FIFO put there meanwhile, whose open would wait.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return Source{}, fmt.Errorf("read %s %s: not a regular file", kind, path)
	}
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Source{}, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return Source{}, fmt.Errorf("read %s: %w", kind, err)
	}
	if !fi.Mode().IsRegular() {
		return Source{}, fmt.Errorf("read %s %s: not a regular file", kind, path)
	}
	if err := checkOwner(fi, path, kind); err != nil {
		return Source{}, err
	}
	data, err := io.ReadAll(io.LimitReader(file, maxFileSize+1))
	if err != nil {
		return Source{}, fmt.Errorf("read %s: %w", kind, err)
	}
	if len(data) > maxFileSize {
		return Source{}, fmt.Errorf("read %s %s: larger than %d bytes", kind, path, maxFileSize)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Source{}, fmt.Errorf("read %s %s: %w", kind, path, err)
	}
	return Source{File: name, ID: abs, Dir: filepath.Dir(abs), Data: data}, nil
}

// checkOwner refuses a file that belongs to another user, or that group or
// others may write: either could change a jail's policy behind the
// caller's back.
func checkOwner(fi fs.FileInfo, path, kind string) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s %s belongs to uid %d: jail reads only %s files owned by you or root", kind, path, st.Uid, kind)
	}
	if fi.Mode().IsRegular() && fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s %s is writable by group or others (mode %04o): chmod go-w it", kind, path, fi.Mode().Perm())
	}
	return nil
}
