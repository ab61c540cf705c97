// Package plancache keeps planned runs so the next identical invocation
// replays its plan without starting the Go runtime: cache.c, run from the
// jail binary's constructor, finds the entry, checks it and hands it to the
// runner. Planning (profiles, mount resolution) costs more than a jail's
// whole setup on some hosts, and an agent runs the same few invocations over
// and over.
//
// An entry is trusted only as far as its owner: it lives in a directory
// private to the caller, at a fixed place (/run/jail/plans for root,
// /run/user/UID/jail/plans for others, where systemd gives each user a
// private runtime directory), so that no writable bind can reach it under
// another name (mount.Options.Protected), and is used only for exactly the
// same invocation (run flags, uid, gid, working directory, HOME,
// JAIL_PROFILE_PATH, the jail binary itself) when every file it was planned
// from (profiles, mount sources and every path met resolving them, copied
// files) still has the same inode, size, owner, mode and times. Anything
// else replans.
package plancache

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"jail/internal/wire"
)

const (
	magic   = 0x4341434a // "JCAC"
	version = 1
)

// Dir is where this caller's entries go; cache.c's cache_dir looks there.
// For an unprivileged caller it is used only while /run/user/UID is a
// directory of its own that nobody else may enter.
func Dir() string {
	if os.Geteuid() == 0 {
		return "/run/jail/plans"
	}
	return filepath.Join("/run/user", strconv.Itoa(os.Geteuid()), "jail", "plans")
}

// Protected is jail's state directory, which no writable bind may reach:
// a jail that could write it could choose the next run's policy.
func Protected() string { return filepath.Dir(Dir()) }

// Key is what an invocation is cached under; cache.c's make_key builds the
// same bytes. argv is jail's own, up to "--". An invocation that is more
// than run flags (args.go) is not cached: ok is false.
func Key(argv, env []string) (key []byte, ok bool, err error) {
	cwd, err := syscall.Getwd() // the kernel's answer, as getcwd(3) gives C
	if err != nil {
		return nil, false, err
	}
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &st); err != nil {
		return nil, false, err
	}
	get := func(name string) string {
		for _, kv := range env {
			if v, ok := cut(kv, name+"="); ok {
				return v
			}
		}
		return ""
	}
	var k []byte
	add := func(s string) { k = append(append(k, s...), 0) }
	num := func(v uint64) { add(strconv.FormatUint(v, 10)) }
	add("jail-plan-key-v2")
	num(uint64(os.Geteuid()))
	num(uint64(os.Getegid()))
	add(cwd)
	add(get("HOME"))
	add(get("JAIL_PROFILE_PATH"))
	num(st.Dev)
	num(st.Ino)
	num(uint64(st.Size))
	num(uint64(st.Mtim.Sec)*1e9 + uint64(st.Mtim.Nsec))
	ok = walk(argv, func(name, value string) {
		// Where the status record goes is not part of the plan: a
		// caller may name a new file for every run.
		switch name {
		case "status-json":
			return
		case "p":
			name = "profile"
		}
		add(name + "=" + value)
	})
	return k, ok, nil
}

// Deps are the files a plan came from, by path: what lstat said of each, or
// nil when it did not exist.
type Deps map[string]fs.FileInfo

// Store writes a planned run under key. It fails rather than write into a
// directory someone else could write to.
func Store(dir string, key []byte, deps Deps, plan []byte) error {
	if os.Geteuid() != 0 {
		// The runtime directory is the system's to make, not ours.
		if err := isPrivate(filepath.Dir(filepath.Dir(dir))); err != nil {
			return err
		}
	}
	if err := privateDir(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := privateDir(dir); err != nil {
		return err
	}
	var w wire.Writer
	w.Grow(len(plan) + len(key) + 128*len(deps) + 64)
	w.U32(magic)
	w.U32(version)
	w.Bytes(key)
	paths := make([]string, 0, len(deps))
	for p := range deps {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	w.U32(uint32(len(paths)))
	for _, p := range paths {
		if err := putDep(&w, p, deps[p]); err != nil {
			return err
		}
	}
	w.Bytes(plan)

	h := fnv.New64a()
	h.Write(key)
	name := filepath.Join(dir, fmt.Sprintf("%016x", h.Sum64()))
	tmp, err := os.CreateTemp(dir, ".new-")
	if err != nil {
		return fmt.Errorf("plan cache: %w", err)
	}
	_, err = tmp.Write(w.Data())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("plan cache: %w", err)
	}
	prune(dir)
	return nil
}

// Bounds on the cache: it lives in memory (/run, $XDG_RUNTIME_DIR), and an
// invocation whose flags change with every run (a new --env value, say)
// adds an entry each time.
const (
	maxEntries  = 64
	keepEntries = 48
)

// staleNew is how old a half-written entry (".new-*") is when prune
// takes it for one whose writer was killed before its rename.
const staleNew = time.Minute

// prune removes half-written entries a killed jail left, and the least
// recently written entries once there are too many.
func prune(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && strings.HasPrefix(e.Name(), ".new-") && time.Since(fi.ModTime()) > staleNew {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	if len(entries) <= maxEntries {
		return
	}
	type aged struct {
		name string
		mod  int64
	}
	var all []aged
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			all = append(all, aged{e.Name(), fi.ModTime().UnixNano()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod > all[j].mod })
	for _, a := range all[min(keepEntries, len(all)):] {
		os.Remove(filepath.Join(dir, a.name))
	}
}

func putDep(w *wire.Writer, path string, fi fs.FileInfo) error {
	w.Str(path)
	if fi == nil {
		w.U32(0)
		return nil
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("plan cache: no stat of %s", path)
	}
	w.U32(1)
	w.U64(st.Dev)
	w.U64(st.Ino)
	w.U32(st.Mode)
	w.U32(st.Uid)
	w.U32(st.Gid)
	w.U64(uint64(st.Size))
	w.U64(uint64(st.Mtim.Sec)*1e9 + uint64(st.Mtim.Nsec))
	w.U64(uint64(st.Ctim.Sec)*1e9 + uint64(st.Ctim.Nsec))
	return nil
}

// privateDir makes dir if it is missing and insists that it belongs to the
// caller and that nobody else may enter it.
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("plan cache: %w", err)
	}
	return isPrivate(dir)
}

func isPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("plan cache: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("plan cache: %s is not a directory private to uid %d", dir, os.Geteuid())
	}
	return nil
}

func cut(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}
