// Package plancache keeps planned runs so the next identical invocation
// replays its plan without starting the Go runtime. Planning (profiles,
// mount resolution) costs more than a jail's whole setup on some hosts, and
// an agent runs the same few invocations over and over.
//
// The cache is C, both sides of it: the lookup (lookup.c) runs from the
// jail binary's constructor before Go starts, and the runner stores what Go
// planned (store.c), so one language owns the key, the entries and their
// directory. Go gives the runner, with the plan, what only it knows: the
// files the plan came from (Deps), and whether the run may be cached at all.
//
// An entry is trusted only as far as its owner: it lives in a directory
// private to the caller, at a fixed place (/run/jail/plans for root,
// /run/user/UID/jail/plans for others, where systemd gives each user a
// private runtime directory), so that no writable bind can reach it under
// another name (StateDir), and is used only for exactly the same invocation
// (run flags, uid, gid, working directory, HOME, JAIL_PROFILE_PATH, a
// session's workspace, the jail binary itself) when every file it was
// planned from (profiles, mount sources and every path met resolving them,
// copied files) still has the same inode, owner and mode, and for all but
// directories the same size and times. Anything else replans. The C side
// also replays a session's run, opening the session as package sessions
// would, and jail-sh's, rewriting its arguments as the CLI would.
package plancache

// #include "plancache/plancache.h"
import "C"

import (
	"fmt"
	"io/fs"
	"sort"
	"syscall"

	"github.com/jail-sandbox/jail/internal/wire"
)

// StateDir is jail's state directory, where the cache lives (dir.c says
// where): no writable bind may reach it, for a jail that could write it
// could choose the next run's policy.
func StateDir() string {
	var buf [256]C.char // "/run/user/" and a uid, "/jail"
	if C.plancache_state_dir(&buf[0], C.size_t(len(buf))) < 0 {
		panic("plancache: the state directory's path does not fit 256 bytes")
	}
	return C.GoString(&buf[0])
}

// Deps are the files a plan came from, by path: what lstat said of each, or
// nil when it did not exist.
type Deps map[string]fs.FileInfo

// Encode writes the deps as the cache's entries hold them (entry.h), for
// the runner to store with the plan. On error w holds a part of them.
func (d Deps) Encode(w *wire.Writer) error {
	paths := make([]string, 0, len(d))
	for p := range d {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	w.U32(uint32(len(paths)))
	for _, p := range paths {
		if err := putDep(w, p, d[p]); err != nil {
			return err
		}
	}
	return nil
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
