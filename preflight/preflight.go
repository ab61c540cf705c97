// Package preflight is `jail check`: one line per thing jail needs from the
// host and the caller, and for each that is missing, how to fix it. Checks
// try the real thing where they can (a user namespace, a whole jail) rather
// than guess from kernel versions.
package preflight

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Result is one line of the report.
type Result struct {
	Name   string
	OK     bool
	Detail string
	Fix    string // how to fix a failure
	// Optional results do not fail the check: features jail can run
	// without (the run fails only when a profile asks for them).
	Optional bool
}

// Checks runs every check, in the order a reader would fix them.
func Checks() []Result {
	return []Result{
		userNamespaces(),
		mountAPI(),
		wholeJail(),
		seccompSupport(),
		cgroups(),
		cgroupAttach(),
		tunDevice(),
		landlock(),
	}
}

// Run prints the report and reports whether every required check passed.
func Run(w io.Writer) bool {
	ok := true
	for _, r := range Checks() {
		mark := "ok  "
		switch {
		case !r.OK && r.Optional:
			mark = "warn"
		case !r.OK:
			mark = "FAIL"
			ok = false
		}
		fmt.Fprintf(w, "%s  %s: %s\n", mark, r.Name, r.Detail)
		if !r.OK && r.Fix != "" {
			fmt.Fprintf(w, "      fix: %s\n", r.Fix)
		}
	}
	return ok
}

// sysctl reads an integer from /proc/sys; ok is false when it is absent.
func sysctl(path string) (int, bool) {
	b, err := os.ReadFile("/proc/sys/" + path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return n, err == nil
}
