package plancache

// Go's way into the cache's C side, for the tests at the boundary: the
// argument walk, which must read the CLI's flags as the CLI does
// (cacheflags_test.go in package main), jail-sh's rewrite, which must be
// cmd_sh.go's (cmd_sh_test.go), a session's place and opening, which must
// be package sessions' (sessions_test.go), and the store and lookup below
// a directory of the test's own (plancache_test.go).

/*
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plancache/entry.h"
#include "plancache/plancache.h"

// collect writes each flag the walk reads as name NUL value NUL.
static void collect(void *ctx, const char *name, size_t n, const char *value)
{
	fwrite(name, 1, n, ctx);
	fputc(0, ctx);
	fwrite(value, 1, strlen(value) + 1, ctx);
}

// walk runs the walk on argv into a malloc'd buffer (*out, *n bytes).
static int walk(char **argv, char **out, size_t *n)
{
	FILE *f = open_memstream(out, n);
	if (!f)
		return -2;
	int r = plancache_args(argv, collect, f);
	return fclose(f) != 0 ? -2 : r;
}
*/
import "C"

import (
	"errors"
	"strings"
	"unsafe"
)

// Flag is one run flag as the cache's walk read it from jail's arguments.
type Flag struct{ Name, Value string }

// ReadArgs reads argv (jail's own: flags, "--", a command) as the cache
// does (args.c): the run flags with their values, in order. ok is false
// when the invocation is not one the cache may replay. It is there for the
// test that holds the walk to the CLI's flags.
func ReadArgs(argv []string) (flags []Flag, ok bool) {
	cargv := cStrings(argv)
	defer freeStrings(cargv)
	var out *C.char
	var n C.size_t
	r := C.walk(&cargv[0], &out, &n)
	defer C.free(unsafe.Pointer(out))
	if r == -2 {
		panic("plancache: out of memory")
	}
	if r < 0 {
		return nil, false
	}
	fields := strings.Split(C.GoStringN(out, C.int(n)), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		flags = append(flags, Flag{fields[i], fields[i+1]})
	}
	return flags, true
}

// ShEnv are jail-sh's settings as C's rewrite (sh.c) takes them: the
// variables ("" for unset), and what the host gives it.
type ShEnv struct {
	Profile, Session, Allow, Flags string // JAIL_PROFILE, JAIL_SESSION, JAIL_ALLOW, JAIL_FLAGS
	Cwd, Shell                     string // os.Getwd's answer; "bash" or "sh"
}

// ShArgv is the jail run C makes of jail-sh's args (those after argv[0]);
// ok is false where C leaves the rewrite to Go.
func ShArgv(args []string, env ShEnv) (argv []string, ok bool) {
	cargs := cStrings(args)
	defer freeStrings(cargs)
	strs := cStrings([]string{env.Profile, env.Session, env.Allow, env.Flags, env.Cwd, env.Shell})
	defer freeStrings(strs)
	sh := C.struct_pc_sh{profile: strs[0], session: strs[1], allow: strs[2], flags: strs[3], cwd: strs[4], shell: strs[5]}
	out := C.pc_sh_argv(&cargs[0], &sh)
	if out == nil {
		return nil, false
	}
	defer C.free(unsafe.Pointer(out))
	for _, p := range unsafe.Slice(out, 1<<20) {
		if p == nil {
			break
		}
		argv = append(argv, C.GoString(p))
	}
	return argv, true
}

// Getwd is the working directory as C finds it for jail-sh (Go's
// os.Getwd, with pwd as $PWD); ok is false where C leaves it to Go.
func Getwd(pwd string) (string, bool) {
	var buf [C.PC_PATH_MAX]C.char
	cpwd := C.CString(pwd)
	defer C.free(unsafe.Pointer(cpwd))
	if C.pc_getwd(cpwd, &buf[0], C.size_t(len(buf))) < 0 {
		return "", false
	}
	return C.GoString(&buf[0]), true
}

// CleanPath is C's filepath.Clean of a rooted path (pc_clean).
func CleanPath(path string) (string, bool) {
	buf := make([]C.char, len(path)+2)
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if C.pc_clean(cpath, &buf[0], C.size_t(len(buf))) < 0 {
		return "", false
	}
	return C.GoString(&buf[0]), true
}

// SessionIDOK says C takes id for a session's (sessions.Check).
func SessionIDOK(id string) bool {
	cid := C.CString(id)
	defer C.free(unsafe.Pointer(cid))
	return C.pc_session_id_ok(cid) != 0
}

// SessionState is C's sessions.StateDir for these values of
// JAIL_STATE_DIR and HOME ("" for unset) and euid; ok is false where C
// leaves it to Go.
func SessionState(stateEnv, home string, euid int) (string, bool) {
	var buf [C.PC_PATH_MAX]C.char
	cs := cStrings([]string{stateEnv, home})
	defer freeStrings(cs)
	if C.pc_session_state(cs[0], cs[1], C.uint(euid), &buf[0], C.size_t(len(buf))) < 0 {
		return "", false
	}
	return C.GoString(&buf[0]), true
}

// SessionWorkspace is where C finds session id's workspace, from this
// process's environment (it keys a session's plan).
func SessionWorkspace(id string) (string, bool) {
	var buf [C.PC_PATH_MAX]C.char
	cid := C.CString(id)
	defer C.free(unsafe.Pointer(cid))
	if C.pc_session_workspace(cid, &buf[0], C.size_t(len(buf))) < 0 {
		return "", false
	}
	return C.GoString(&buf[0]), true
}

// SessionOpen opens session id as a replayed run does (session.c), for a
// jail whose host uid is uid: the lock's fd, or ok false where C hands
// the session to Go.
func SessionOpen(id string, uid int) (lock int, ok bool) {
	cid := C.CString(id)
	defer C.free(unsafe.Pointer(cid))
	var fd C.int
	if C.pc_session_open(cid, C.uint(uid), &fd) < 0 {
		return -1, false
	}
	return int(fd), true
}

// store is pc_store in env's cache: it stores plan for argv, with deps
// (encoded as the runner gets them), as the runner would.
func store(env Env, argv []string, plan, deps []byte) error {
	ce, free := cEnv(env)
	defer free()
	cargv := cStrings(argv)
	defer freeStrings(cargv)
	cplan, cdeps := C.CBytes(plan), C.CBytes(deps)
	defer C.free(cplan)
	defer C.free(cdeps)
	if C.pc_store(&ce, &cargv[0], (*C.uchar)(cplan), C.size_t(len(plan)), (*C.char)(cdeps), C.size_t(len(deps))) < 0 {
		return errors.New("not stored")
	}
	return nil
}

// load is pc_load in env's cache: the plan cached for argv, as the
// constructor would find it.
func load(env Env, argv []string) (plan []byte, ok bool) {
	ce, free := cEnv(env)
	defer free()
	cargv := cStrings(argv)
	defer freeStrings(cargv)
	var p *C.char
	var n C.size_t
	buf := C.pc_load(&ce, &cargv[0], &p, &n)
	if buf == nil {
		return nil, false
	}
	defer C.free(unsafe.Pointer(buf))
	return C.GoBytes(unsafe.Pointer(p), C.int(n)), true
}

// cStrings is argv as C has it: C strings, then NULL.
func cStrings(ss []string) []*C.char {
	out := make([]*C.char, len(ss)+1)
	for i, s := range ss {
		out[i] = C.CString(s)
	}
	return out
}

func freeStrings(cs []*C.char) {
	for _, c := range cs {
		C.free(unsafe.Pointer(c))
	}
}
