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
// private to the caller, at a place no writable bind may reach under any
// name (Guarded): /run/jail/plans for root; for others
// /run/user/UID/jail/plans, where a login manager (systemd) gives each
// user a private runtime directory, else $XDG_RUNTIME_DIR/jail/plans, else,
// on a system with no /run/user at all (a container), plans in the cache/
// of sessions' state directory (dir.c says why in that order). It is used
// only for exactly the same invocation
// (run flags, uid, gid, working directory, HOME, JAIL_PROFILE_PATH, a
// session's workspace, the jail binary itself) when every file it was
// planned from (profiles, mount sources and every path met resolving them,
// copied files) still has the same inode, owner and mode, and for all but
// directories the same size and times. Anything else replans. The C side
// also replays a session's run, opening the session as package sessions
// would, and jail-sh's, rewriting its arguments as the CLI would.
package plancache

// #include <stdlib.h>
// #include "plancache/entry.h"
import "C"

import (
	"fmt"
	"io/fs"
	"sort"
	"syscall"
	"unsafe"

	"github.com/jail-sandbox/jail/internal/wire"
)

// Env is what decides where a caller's cache is: the caller and its
// environment ("" for a variable that is unset).
type Env struct {
	Run                           string // "/run" but in tests
	EUID                          int
	XDGRuntimeDir, StateDir, Home string // $XDG_RUNTIME_DIR, $JAIL_STATE_DIR, $HOME
}

// SelfEnv is this process's, as the runner and the next invocation see
// theirs: jail passes its environment on to the runner.
func SelfEnv() Env {
	var e C.struct_pc_env
	C.pc_env_self(&e) // C's getenv, as the lookup and the store read it
	return Env{Run: C.GoString(e.run), EUID: int(e.euid), XDGRuntimeDir: C.GoString(e.xdg),
		StateDir: C.GoString(e.state), Home: C.GoString(e.home)}
}

// At is one of the places the cache may be, in the order they are tried.
type At int

// The places. None: the caller has no cache.
const (
	None     At = -1
	AtRun    At = C.PC_AT_RUN   // /run/jail for root, /run/user/UID/jail for others
	AtXDG    At = C.PC_AT_XDG   // $XDG_RUNTIME_DIR/jail
	AtState  At = C.PC_AT_STATE // the cache/ of sessions' state directory
	numPlace    = C.PC_AT_N
)

// Why is why a place, or a directory in it, is not used: 0 (it is), an
// errno, or one of the reasons below.
type Why int

// The reasons that are not errnos (entry.h's).
const (
	NotPrivate Why = C.PC_NOT_PRIVATE // not the caller's, or others may enter it
	Unset      Why = C.PC_UNSET       // the variable it comes from is unset
	Relative   Why = C.PC_RELATIVE    // the variable is not an absolute path
	Same       Why = C.PC_SAME        // $XDG_RUNTIME_DIR is /run/user/UID, tried first
	NotHere    Why = C.PC_NOT_HERE    // not a place for this caller on this system
	ParentOpen Why = C.PC_PARENT_OPEN // $XDG_RUNTIME_DIR's parent is not root's alone
)

// Errno is the errno Why holds, or 0.
func (w Why) Errno() syscall.Errno {
	if w > 0 {
		return syscall.Errno(w)
	}
	return 0
}

// Place is where a caller's cache is, or why it has none (dir.c decides).
type Place struct {
	At At
	// Dirs are each place's state directory, which holds plans/ (and
	// compiled seccomp filters): "" where there is none.
	Dirs [numPlace]string
	// Why holds, for each place tried and passed over, why.
	Why [numPlace]Why
	// UserDirs: /run/user exists, so sessions' state directory is not a
	// place (a login manager's host).
	UserDirs bool
	// StateWhy and PlansWhy say whether At's state directory and its
	// plans/ are in use: 0, or why not (ENOENT: the first run makes it).
	StateWhy, PlansWhy Why
}

// Where says where the cache of the caller env describes is, making
// nothing.
func Where(env Env) Place {
	ce, free := cEnv(env)
	defer free()
	var cp C.struct_pc_place
	C.pc_where(&ce, &cp)
	p := Place{At: At(cp.at), UserDirs: cp.user_dirs != 0, StateWhy: Why(cp.state_why), PlansWhy: Why(cp.plans_why)}
	for i := range p.Dirs {
		p.Dirs[i] = C.GoString(&cp.dir[i][0])
		p.Why[i] = Why(cp.why[i])
	}
	return p
}

// Dir is the state directory in use, or, when there is none, the first
// place's, where compiled filters are looked for all the same.
func (p Place) Dir() string {
	if p.At == None {
		return p.Dirs[AtRun]
	}
	return p.Dirs[p.At]
}

// Guarded are the state directories the cache could be in for this
// caller, in this environment, whichever it is in now: none may be
// reachable by a writable bind, or a jail could plant the plan a later run
// replays should the cache move there (its place gone, or made).
func (p Place) Guarded() []string {
	var g []string
	for _, d := range p.Dirs {
		if d != "" {
			g = append(g, d)
		}
	}
	return g
}

// StateDir is jail's state directory for this process, where the cache
// lives (Place.Dir): no writable bind may reach it (nor any of Guarded),
// for a jail that could write it could choose the next run's policy.
func StateDir() string { return Where(SelfEnv()).Dir() }

// cEnv is env as C takes it, and the function that frees it.
func cEnv(env Env) (C.struct_pc_env, func()) {
	var strs []*C.char
	str := func(s string) *C.char {
		if s == "" {
			return nil
		}
		c := C.CString(s)
		strs = append(strs, c)
		return c
	}
	ce := C.struct_pc_env{run: str(env.Run), euid: C.uint(env.EUID), xdg: str(env.XDGRuntimeDir),
		state: str(env.StateDir), home: str(env.Home)}
	return ce, func() {
		for _, c := range strs {
			C.free(unsafe.Pointer(c))
		}
	}
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
