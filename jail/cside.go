package jail

// Go's way into the runner's C decoders and writers, for the tests at the
// Go-C boundary (fuzz_test.go): a cached plan is read from disk by
// runplan_decode before any Go runs; the runner forwards it to the init
// stage with a tail (forward_encode), which the init stage reads back
// (forward_decode); and every status record and audit line is escaped by
// json_str.

/*
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "jail/json.h"
#include "jail/proxyctl.h"
#include "jail/runplan.h"
#include "jail/stage.h"
#include "seccomp/sc.h"

// proxy_lines reads what the proxy wrote (fd, to its EOF) as the runner
// does; the struct is large, so it is the C side's.
static struct proxy *proxy_lines(int fd)
{
	struct proxy *px = calloc(1, sizeof *px);
	if (!px)
		return NULL;
	while (proxy_read(px, fd))
		;
	return px;
}

// decode_plan decodes a run plan, as the runner does at its start, the
// seccomp answers included.
static int decode_plan(const unsigned char *buf, size_t len, char *err, size_t errlen, struct run_plan *out)
{
	struct jerr e = {0};
	int r = runplan_decode(buf, len, out, &e);
	if (r == 0 && (out->sc_flags & SC_NOTIFY)) {
		struct wire answers = out->sc_answers;
		struct sc_report *rep = sc_report_new(&answers, out->sc_flags, &e);
		if (!rep) {
			r = -1;
			runplan_free(out);
		}
		sc_report_free(rep);
	}
	if (r < 0)
		snprintf(err, errlen, "%s", e.msg);
	return r;
}

// forward_make is what the runner writes on the plan pipe for the plan in
// buf, the command argv and the caller's environment envp.
// rows > 0 is tty mode, with the terminal rows by cols.
static unsigned char *forward_make(const unsigned char *buf, size_t len, char **argv, char **envp, uint32_t umask,
				   int rows, int cols, size_t *out_len, char *err, size_t errlen)
{
	struct jerr e = {0};
	struct run_plan p;
	unsigned char *out = NULL;
	struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
	if (runplan_decode(buf, len, &p, &e) == 0) {
		forward_encode(&p, argv, envp, umask, rows > 0 ? &ws : NULL, &out, out_len, &e);
		runplan_free(&p);
	}
	if (!out)
		snprintf(err, errlen, "%s", e.msg);
	return out;
}

// forward_read decodes what follows the length on the plan pipe, as the
// init stage does.
static int forward_read(const unsigned char *buf, size_t len, char *err, size_t errlen, struct forwarded *out)
{
	struct jerr e = {0};
	int r = forward_decode(buf, len, out, &e);
	if (r < 0)
		snprintf(err, errlen, "%s", e.msg);
	return r;
}

// strs_at is the i-th string of a count-prefixed list, or NULL.
static const char *strs_at(struct wire w, uint32_t i)
{
	uint32_t n = wire_u32(&w);
	for (uint32_t k = 0; k < n && !w.bad; k++) {
		const char *s = wire_str(&w);
		if (k == i && !w.bad)
			return s;
	}
	return NULL;
}

// handoff_check reads the hand-over at fd as the runner does (it closes
// fd), and says whether it took it and the plan's and deps' lengths.
static int handoff_check(int fd, size_t *plan_len, size_t *deps_len, char *err, size_t errlen)
{
	struct handoff h;
	struct jerr e = {0};
	int rc = handoff_read(fd, &h, &e);
	if (rc < 0) {
		snprintf(err, errlen, "%s", e.msg);
		return rc;
	}
	*plan_len = h.plan_len;
	*deps_len = h.deps_len;
	free(h.buf);
	return 0;
}

// json_string is json_str into a malloc'd buffer.
static char *json_string(const char *s, size_t *n)
{
	char *mem = NULL;
	FILE *f = open_memstream(&mem, n);
	if (!f)
		return NULL;
	json_str(f, s);
	if (fclose(f) != 0) {
		free(mem);
		return NULL;
	}
	return mem;
}
*/
import "C"

import (
	"errors"
	"os"
	"time"
	"unsafe"
)

// The plan's flag bits, as the C headers define them, for the boundary
// test's expectations (a _test.go file cannot use cgo).
const (
	runRoot        = C.RUN_ROOT
	runNoAdmin     = C.RUN_NO_ADMIN
	procNewSession = C.PROC_NEW_SESSION
	procDropGroups = C.PROC_DROP_GROUPS
	procHostNet    = C.PROC_HOST_NET
	procAllowlist  = C.PROC_ALLOWLIST
	procKeyringBE  = C.PROC_KEYRING_BEST_EFFORT
	procTTYOn      = C.PROC_TTY_ON
	procTTYAuto    = C.PROC_TTY_AUTO
	treeReadOnly   = C.TREE_RO
	treeIDMap      = C.TREE_IDMAP
	scLoad         = C.SC_LOAD
	scNotify       = C.SC_NOTIFY
	scAudit        = C.SC_AUDIT
	scQuiet        = C.SC_QUIET
	scCompiled     = C.SC_COMPILED
	// proxyRefusedLen bounds a refusal line the runner keeps.
	proxyRefusedLen = C.PROXY_REFUSED_LEN
)

// runPlanView is what the runner read from a run plan, field by field.
type runPlanView struct {
	TimeLimit            time.Duration
	Root, NoAdmin        bool
	HostUID, HostGID     uint32
	UID, GID             uint32
	Profile, ProfileHash string
	Trees                []treeView
	Mounts               []byte
	ProcFlags            uint32
	Hostname, Dir        string
	KeepEnv, Env         []string
	Rlimits              []Rlimit
	Cgroup               cgroupView
	MaxOutput            uint64
	Disk, DiskReserve    uint64
	DiskPercent          uint32
	DiskBinds            []string
	SessionDisk          uint64
	SessionDir           string
	LimitsJSON           string
	Network, NetConfig   string
	AuditLog             string
	Session, Version     string
	Secrets              string
	SeccompFlags         uint32
	SeccompName          string
	SeccompBPF           []byte
}

type treeView struct {
	Path               string
	Flags              uint32
	OwnerUID, OwnerGID uint32
}

type cgroupView struct {
	Flags               uint32
	Memory              uint64
	Pids, Quota, Period uint32
	Dirs                []string
}

// forwardedView is what the init stage read from the plan pipe.
type forwardedView struct {
	Plan       runPlanView
	Argv, Envp []string
	Umask      uint32
	TTY        bool   // tty mode
	Rows, Cols uint16 // ... and the caller's terminal's size
}

// runPlanDecode runs the runner's plan decoder on b.
func runPlanDecode(b []byte) (runPlanView, error) {
	buf := C.CBytes(b)
	defer C.free(buf)
	var p C.struct_run_plan
	var msg [1100]C.char
	if C.decode_plan((*C.uchar)(buf), C.size_t(len(b)), &msg[0], C.size_t(len(msg)), &p) < 0 {
		return runPlanView{}, errors.New(C.GoString(&msg[0]))
	}
	defer C.runplan_free(&p)
	return viewPlan(&p), nil
}

// forwardEncode runs the runner's forward_encode: what it writes on the
// plan pipe for plan, argv and the caller's environment env.
func forwardEncode(plan []byte, argv, env []string, umask uint32) ([]byte, error) {
	return forwardEncodeTTY(plan, argv, env, umask, 0, 0)
}

// forwardEncodeTTY is forwardEncode in tty mode, for a caller's terminal
// of rows by cols (rows 0: not in tty mode).
func forwardEncodeTTY(plan []byte, argv, env []string, umask uint32, rows, cols int) ([]byte, error) {
	buf := C.CBytes(plan)
	defer C.free(buf)
	cargv, free1 := cStrings(argv)
	defer free1()
	cenv, free2 := cStrings(env)
	defer free2()
	var n C.size_t
	var msg [1100]C.char
	out := C.forward_make((*C.uchar)(buf), C.size_t(len(plan)), cargv, cenv, C.uint32_t(umask), C.int(rows), C.int(cols), &n, &msg[0], C.size_t(len(msg)))
	if out == nil {
		return nil, errors.New(C.GoString(&msg[0]))
	}
	defer C.free(unsafe.Pointer(out))
	return C.GoBytes(unsafe.Pointer(out), C.int(n)), nil
}

// handoffRead runs the runner's hand-over reader on the memfd fd (which
// it closes): the plan's and the deps' lengths it found.
func handoffRead(fd int) (planLen, depsLen int, err error) {
	var pl, dl C.size_t
	var msg [256]C.char
	if C.handoff_check(C.int(fd), &pl, &dl, &msg[0], C.size_t(len(msg))) < 0 {
		return 0, 0, errors.New(C.GoString(&msg[0]))
	}
	return int(pl), int(dl), nil
}

// forwardDecode runs the init stage's decoder on b (what follows the
// length on the plan pipe).
func forwardDecode(b []byte) (forwardedView, error) {
	buf := C.CBytes(b)
	defer C.free(buf)
	var f C.struct_forwarded
	var msg [1100]C.char
	if C.forward_read((*C.uchar)(buf), C.size_t(len(b)), &msg[0], C.size_t(len(msg)), &f) < 0 {
		return forwardedView{}, errors.New(C.GoString(&msg[0]))
	}
	defer C.forward_free(&f)
	return forwardedView{Plan: viewPlan(&f.plan), Argv: goStrings(f.argv), Envp: goStrings(f.envp), Umask: uint32(f.umask),
		TTY: f.tty != 0, Rows: uint16(f.ws.ws_row), Cols: uint16(f.ws.ws_col)}, nil
}

func viewPlan(p *C.struct_run_plan) runPlanView {
	v := runPlanView{
		TimeLimit: time.Duration(p.time_limit_ns), Root: p.flags&C.RUN_ROOT != 0, NoAdmin: p.flags&C.RUN_NO_ADMIN != 0,
		HostUID: uint32(p.host_uid), HostGID: uint32(p.host_gid), UID: uint32(p.uid), GID: uint32(p.gid),
		Profile: C.GoString(p.profile), ProfileHash: C.GoString(p.profile_hash),
		Mounts:    C.GoBytes(unsafe.Pointer(p.mounts), C.int(p.mounts_len)),
		ProcFlags: uint32(p.proc_flags), Hostname: C.GoString(p.hostname), Dir: C.GoString(p.cwd),
		KeepEnv: wireStrs(p.keep), Env: wireStrs(p.set),
		MaxOutput: uint64(p.max_output), LimitsJSON: C.GoString(p.limits_json),
		Disk: uint64(p.disk_limit), DiskReserve: uint64(p.disk_reserve), DiskPercent: uint32(p.disk_percent),
		DiskBinds: wireStrs(p.disk_binds), SessionDisk: uint64(p.session_disk), SessionDir: C.GoString(p.session_dir),
		Network: C.GoString(p.net_mode), NetConfig: C.GoString(p.net_config), AuditLog: C.GoString(p.audit_path),
		Session: C.GoString(p.session), Version: C.GoString(p.version), Secrets: C.GoString(p.secrets),
		SeccompFlags: uint32(p.sc_flags), SeccompName: C.GoString(p.sc_name),
		SeccompBPF: C.GoBytes(unsafe.Pointer(p.sc_bpf), C.int(p.sc_len)),
		Cgroup: cgroupView{Flags: uint32(p.cg.flags), Memory: uint64(p.cg.memory), Pids: uint32(p.cg.pids),
			Quota: uint32(p.cg.cpu_quota_us), Period: uint32(p.cg.cpu_period_us)},
	}
	for _, t := range unsafe.Slice(p.trees, p.ntrees) {
		v.Trees = append(v.Trees, treeView{Path: C.GoString(t.path), Flags: uint32(t.flags),
			OwnerUID: uint32(t.owner_uid), OwnerGID: uint32(t.owner_gid)})
	}
	for _, r := range unsafe.Slice(p.rlimits, p.nrlimits) {
		v.Rlimits = append(v.Rlimits, Rlimit{Resource: int(r.resource), Soft: uint64(r.soft), Hard: uint64(r.hard)})
	}
	for i := C.uint32_t(0); i < p.cg.ndirs; i++ {
		v.Cgroup.Dirs = append(v.Cgroup.Dirs, C.GoString(p.cg.dirs[i].path))
	}
	return v
}

// wireStrs reads a count-prefixed list of strings the plan holds.
func wireStrs(w C.struct_wire) []string {
	var out []string
	for i := C.uint32_t(0); ; i++ {
		s := C.strs_at(w, i)
		if s == nil {
			return out
		}
		out = append(out, C.GoString(s))
	}
}

// cStrings is ss as a NULL-terminated C array, and what frees it.
func cStrings(ss []string) (**C.char, func()) {
	arr := (*[1 << 20]*C.char)(C.calloc(C.size_t(len(ss)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	for i, s := range ss {
		arr[i] = C.CString(s)
	}
	return &arr[0], func() {
		for i := range ss {
			C.free(unsafe.Pointer(arr[i]))
		}
		C.free(unsafe.Pointer(arr))
	}
}

// goStrings reads a NULL-terminated C array of strings.
func goStrings(v **C.char) []string {
	var out []string
	for p := v; p != nil && *p != nil; p = (**C.char)(unsafe.Add(unsafe.Pointer(p), unsafe.Sizeof(*p))) {
		out = append(out, C.GoString(*p))
	}
	return out
}

// jsonString is what the runner writes for s in a status record.
func jsonString(s string) string {
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	var n C.size_t
	out := C.json_string(cs, &n)
	if out == nil {
		return ""
	}
	defer C.free(unsafe.Pointer(out))
	return C.GoStringN(out, C.int(n))
}

// proxyLines is what the runner keeps of the lines the proxy wrote: the
// last whole report, what it would say, and whether a report was lost.
func proxyLines(text string) (proxyRead, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return proxyRead{}, err
	}
	defer r.Close()
	go func() {
		w.WriteString(text)
		w.Close()
	}()
	px := C.proxy_lines(C.int(r.Fd()))
	if px == nil {
		return proxyRead{}, errors.New("out of memory")
	}
	defer C.free(unsafe.Pointer(px))
	got := proxyRead{Last: C.GoString(&px.last[0]), Note: C.GoString(&px.note[0]), Incomplete: px.incomplete != 0,
		Refusals: int(px.nrefused)}
	for i := 0; i < int(px.nrefused) && i < C.PROXY_REFUSED_SAID; i++ {
		got.Refused = append(got.Refused, C.GoString(&px.refused[i][0]))
	}
	return got, nil
}

// proxyRead is what the runner kept of what the proxy wrote.
type proxyRead struct {
	Last, Note string   // the last whole report; the proxy's own words
	Incomplete bool     // a report was dropped
	Refused    []string // the refusals jail names at the end
	Refusals   int      // how many refusals in all
}
