// Package preflight is `jail check`: one line per thing jail needs from the
// host and the caller, and for each that is missing, its cause and how to
// fix it. Checks try the real thing where they can (a user namespace, a
// whole jail) rather than guess from kernel versions; what the mount table
// already tells (a masked /proc, a read-only cgroupfs) is read first, so
// that one pass names every blocker, each with its own fix, rather than
// one per round.
package preflight

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moby/sys/mountinfo"

	"github.com/jail-sandbox/jail/plancache"
)

// Result is one check's report.
type Result struct {
	Name   string
	OK     bool
	Detail string
	// Cause says why it failed, where the detail (a step's own error)
	// does not.
	Cause string
	// Fixes are the ways to fix a failure, the likeliest first: a line
	// each.
	Fixes []string
	// Optional results do not fail the check: features jail can run
	// without (the run fails only when a profile asks for them).
	Optional bool
	// Skipped: it does not apply, since a check above failed (OK is
	// false, and the report does not fail for it).
	Skipped bool
}

// mark is the result's first column.
func (r Result) mark() string {
	switch {
	case r.OK:
		return "ok  "
	case r.Skipped:
		return "skip"
	case r.Optional:
		return "warn"
	}
	return "FAIL"
}

// Checks runs every check, in the order a reader would fix them. Each that
// depends on one above (a jail needs a user namespace and a procfs; the
// attach speed matters only with cgroups) is told what that one found.
func Checks() []Result {
	h := readHost()
	userns := userNamespaces(h)
	api := mountAPI()
	sc := seccompSupport()
	proc := procMount(h)
	whole := wholeJail(h, above{userns: !userns.OK, mountAPI: !api.OK, proc: !proc.OK})
	cg := cgroups(h, whole.OK)
	return []Result{
		userns,
		api,
		sc,
		proc,
		whole,
		cg,
		cgroupAttach(cg.OK || cg.Skipped),
		planCache(plancache.Where(plancache.SelfEnv()), h.euid),
		tunDevice(),
		landlock(),
	}
}

// Run prints the report and reports whether every required check passed.
func Run(w io.Writer) bool { return report(w, Checks()) }

// report prints results, a line each and under a failure its cause and
// fixes, and reports whether every required one passed.
func report(w io.Writer, results []Result) bool {
	ok := true
	for _, r := range results {
		mark := r.mark()
		if mark == "FAIL" {
			ok = false
		}
		fmt.Fprintf(w, "%s  %s: %s\n", mark, r.Name, r.Detail)
		if r.OK {
			continue
		}
		if r.Cause != "" {
			fmt.Fprintf(w, "      cause: %s\n", r.Cause)
		}
		for _, f := range r.Fixes {
			fmt.Fprintf(w, "      fix: %s\n", f)
		}
	}
	return ok
}

// host is what the checks read of this host and this caller, once; the
// tests make their own.
type host struct {
	euid int
	// filtered: this process runs under a seccomp filter (Seccomp: 2 in
	// /proc/self/status), as container runtimes impose.
	filtered bool
	// capSysAdmin: CAP_SYS_ADMIN is in its effective set.
	capSysAdmin bool
	// procSys is the /proc/sys tree the sysctls are read from.
	procSys string
	// mounts is this process's mount table (nil: it could not be read).
	mounts []*mountinfo.Info
}

func readHost() host {
	h := host{euid: os.Geteuid(), procSys: "/proc/sys"}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		h.filtered = statusField(string(b), "Seccomp") == "2"
		eff, _ := strconv.ParseUint(statusField(string(b), "CapEff"), 16, 64)
		h.capSysAdmin = eff&(1<<21) != 0
	}
	h.mounts, _ = mountinfo.GetMounts(nil)
	return h
}

// statusField is the value of a field of /proc/PID/status ("" if absent).
func statusField(status, name string) string {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// sysctl reads an integer under the host's /proc/sys tree; ok is false
// when it is absent.
func (h host) sysctl(path string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(h.procSys, path))
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return n, err == nil
}

// mountAt is the mount seen at path: the last one made there.
func (h host) mountAt(path string) *mountinfo.Info {
	var m *mountinfo.Info
	for _, mi := range h.mounts {
		if mi.Mountpoint == path {
			m = mi
		}
	}
	return m
}

// readOnly reports whether a mount is read-only, by its own flags or its
// filesystem's.
func readOnly(m *mountinfo.Info) bool {
	return hasOpt(m.Options, "ro") || hasOpt(m.VFSOptions, "ro")
}

func hasOpt(opts, opt string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// seccompJailFix is the fix for what the container's seccomp filter
// refuses: jail's own profile first (Docker's default plus what jail
// needs), then no filter at all.
const seccompJailFix = "run the container with jail's seccomp profile, Docker's default plus what jail needs: " +
	"docker run --security-opt seccomp=deploy/seccomp-jail.json (Kubernetes: the pod's seccompProfile, type Localhost); " +
	"seccomp=unconfined works too, with no filter at all"
