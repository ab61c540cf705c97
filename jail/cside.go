package jail

// Go's way into the runner's C decoders and writers, for the tests at the
// Go-C boundary (fuzz_test.go): a cached plan is read from disk by
// runplan_decode before any Go runs, and every status record and audit
// line is escaped by json_str.

/*
#include <stdlib.h>
#include <unistd.h>
#include "jail/json.h"
#include "jail/proxy.h"
#include "jail/runplan.h"
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
// seccomp answers included; it fills the fields the tests compare.
static int decode_plan(const unsigned char *buf, size_t len, char *err, size_t errlen, struct run_plan *out)
{
	struct jerr e = {0};
	int r = runplan_decode(buf, len, out, &e);
	if (r == 0 && (out->sc_flags & SC_NOTIFY)) {
		struct wire answers = out->sc_answers;
		struct sc_report *rep = sc_report_new(&answers, out->sc_flags, &e);
		if (!rep)
			r = -1;
		sc_report_free(rep);
	}
	if (r < 0)
		snprintf(err, errlen, "%s", e.msg);
	return r;
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

// runPlanView is what the runner read from a run plan.
type runPlanView struct {
	TimeLimit             time.Duration
	Root                  bool
	HostUID, HostGID      uint32
	UID, GID              uint32
	Profile, ProfileHash  string
	Trees                 int
	MaxOutput             uint64
	Network, AuditLog     string
	Session, Version      string
	SeccompName           string
	SeccompLen            int
	CgroupFlags, CgroupNd uint32
}

// runPlanDecode runs the runner's plan decoder on b.
func runPlanDecode(b []byte) (runPlanView, error) {
	var v runPlanView
	buf := C.CBytes(b)
	defer C.free(buf)
	var p C.struct_run_plan
	var msg [1100]C.char
	r := C.decode_plan((*C.uchar)(buf), C.size_t(len(b)), &msg[0], C.size_t(len(msg)), &p)
	defer C.runplan_free(&p)
	if r < 0 {
		return v, errors.New(C.GoString(&msg[0]))
	}
	v = runPlanView{
		TimeLimit: time.Duration(p.time_limit_ns), Root: p.flags&1 != 0,
		HostUID: uint32(p.host_uid), HostGID: uint32(p.host_gid), UID: uint32(p.uid), GID: uint32(p.gid),
		Profile: C.GoString(p.profile), ProfileHash: C.GoString(p.profile_hash), Trees: int(p.ntrees),
		MaxOutput: uint64(p.max_output), Network: C.GoString(p.net_mode), AuditLog: C.GoString(p.audit_path),
		Session: C.GoString(p.session), Version: C.GoString(p.version), SeccompName: C.GoString(p.sc_name),
		SeccompLen: int(p.sc_len), CgroupFlags: uint32(p.cg.flags), CgroupNd: uint32(p.cg.ndirs),
	}
	return v, nil
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
func proxyLines(text string) (last, note string, incomplete bool, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", "", false, err
	}
	defer r.Close()
	go func() {
		w.WriteString(text)
		w.Close()
	}()
	px := C.proxy_lines(C.int(r.Fd()))
	if px == nil {
		return "", "", false, errors.New("out of memory")
	}
	defer C.free(unsafe.Pointer(px))
	return C.GoString(&px.last[0]), C.GoString(&px.note[0]), px.incomplete != 0, nil
}
