package seccomp

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	libseccomp "github.com/seccomp/libseccomp-golang"
)

// Cached compiles a policy, or finds it compiled already: compiling costs
// more than the rest of planning, and most runs use one of a few policies.
// Entries are keyed by a hash of the policy, the mode, the architecture and
// libseccomp's version, in dir (private to the caller; "" for no cache).
// compiled says whether it had to compile.
func Cached(p *Policy, mode Mode, dir string) (prog *Program, compiled bool, err error) {
	key := cacheKey(p, mode)
	path := ""
	if dir != "" && privateDir(dir) == nil {
		path = filepath.Join(dir, key)
		if prog, err := readProgram(path); err == nil {
			now := time.Now()
			os.Chtimes(path, now, now) // recently used: pruned last
			return prog, false, nil
		}
	}
	prog, err = Compile(p, mode)
	if err != nil {
		return nil, false, err
	}
	if path != "" {
		// A cache that cannot be written only costs speed.
		writeProgram(dir, path, prog)
		prune(dir, maxEntries)
	}
	return prog, true, nil
}

// maxEntries bounds the cache: every policy, mode and jail binary in use
// makes an entry (a few KiB each), and old binaries' are never read again.
const maxEntries = 64

// prune removes the least recently used entries beyond max.
func prune(dir string, max int) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) <= max {
		return
	}
	type entry struct {
		name string
		at   time.Time
	}
	var all []entry
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			all = append(all, entry{e.Name(), info.ModTime()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].at.After(all[j].at) })
	for _, e := range all[min(max, len(all)):] {
		os.Remove(filepath.Join(dir, e.name))
	}
}

// cacheKey hashes everything a compiled program depends on.
func cacheKey(p *Policy, mode Mode) string {
	h := sha256.New()
	arch, _ := libseccomp.GetNativeArch()
	major, minor, micro := libseccomp.GetLibraryVersion()
	fmt.Fprintf(h, "v1 %s %d.%d.%d audit=%v quiet=%v none=%v default=%v\n", arch, major, minor, micro, mode.Audit, mode.Quiet, p.None, p.Default)
	for _, r := range p.Rules {
		fmt.Fprintf(h, "%q %v %v\n", r.Names, r.Action, r.Conds)
	}
	// Groups may change between builds; the binary's own identity covers
	// that, as it does libseccomp's tables.
	var st syscall.Stat_t
	if syscall.Stat("/proc/self/exe", &st) == nil {
		fmt.Fprintf(h, "%d %d %d %d\n", st.Dev, st.Ino, st.Size, st.Mtim.Nano())
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// The program file: u32 flags (1 notify, 2 audit), u32 default errno, u32
// answers, each u32 nr, u32 errno, u32 conds, each u32 index, u32 op, u64
// value, u64 mask; then the BPF.
func writeProgram(dir, path string, prog *Program) {
	b := binary.LittleEndian.AppendUint32(nil, flagsOf(prog))
	b = binary.LittleEndian.AppendUint32(b, uint32(prog.DefaultErrno))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(prog.Answers)))
	for _, a := range prog.Answers {
		b = binary.LittleEndian.AppendUint32(b, uint32(a.Nr))
		b = binary.LittleEndian.AppendUint32(b, uint32(a.Errno))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(a.Conds)))
		for _, c := range a.Conds {
			b = binary.LittleEndian.AppendUint32(b, uint32(c.Index))
			b = binary.LittleEndian.AppendUint32(b, uint32(c.Op))
			b = binary.LittleEndian.AppendUint64(b, c.Value)
			b = binary.LittleEndian.AppendUint64(b, c.Mask)
		}
	}
	b = append(b, prog.BPF...)
	tmp, err := os.CreateTemp(dir, ".new-")
	if err != nil {
		return
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil && cerr == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}

func flagsOf(p *Program) uint32 {
	var f uint32
	if p.Notify {
		f |= 1
	}
	if p.Audit {
		f |= 2
	}
	return f
}

func readProgram(path string) (*Program, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o077 != 0 || fi.Size() > 4<<20 {
		return nil, errors.New("not a private cache entry")
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, err
	}
	r := reader{b: b}
	flags := r.u32()
	prog := &Program{Notify: flags&1 != 0, Audit: flags&2 != 0, DefaultErrno: int(r.u32())}
	n := r.u32()
	for i := uint32(0); i < n && r.ok(); i++ {
		a := Answer{Nr: int(int32(r.u32())), Errno: int(r.u32())}
		nc := r.u32()
		for j := uint32(0); j < nc && j < 6 && r.ok(); j++ {
			a.Conds = append(a.Conds, Cond{Index: uint(r.u32()), Op: Op(r.u32()), Value: r.u64(), Mask: r.u64()})
		}
		prog.Answers = append(prog.Answers, a)
	}
	if !r.ok() || len(r.b)%8 != 0 || len(r.b) == 0 {
		return nil, errors.New("malformed cache entry")
	}
	prog.BPF = r.b
	return prog, nil
}

type reader struct {
	b   []byte
	bad bool
}

func (r *reader) ok() bool { return !r.bad }

func (r *reader) u32() uint32 {
	if len(r.b) < 4 {
		r.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) u64() uint64 {
	if len(r.b) < 8 {
		r.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

// privateDir makes dir if missing (its parent must exist) and insists it is
// the caller's and closed to everyone else.
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is not private to uid %d", dir, os.Geteuid())
	}
	return nil
}
