package preflight

import (
	"strings"
	"syscall"
	"testing"

	"github.com/jail-sandbox/jail/plancache"
)

// TestPlanCache: the line says which directory the cache is in, and when
// it is not the first place, why the ones before were passed over; with
// none, why each place was, and how to give the caller one.
func TestPlanCache(t *testing.T) {
	enoent := plancache.Why(syscall.ENOENT)
	run := "/run/user/1000/jail"
	for _, tc := range []struct {
		what   string
		euid   int
		p      plancache.Place
		ok     bool
		detail string
		fix    string // in the first fix
	}{
		{"root's", 0, plancache.Place{At: plancache.AtRun, Dirs: [3]string{"/run/jail"}}, true, "/run/jail/plans", ""},
		{"root's, not made yet", 0, plancache.Place{At: plancache.AtRun, Dirs: [3]string{"/run/jail"}, StateWhy: enoent, PlansWhy: enoent},
			true, "/run/jail/plans (the first run makes it)", ""},
		{"root without /run", 0, plancache.Place{At: plancache.None, Dirs: [3]string{"/run/jail"}, Why: [3]plancache.Why{enoent, plancache.NotHere, plancache.NotHere}},
			false, "off, every run is planned anew: /run is missing", "make /run a directory root may write"},
		{"the login manager's", 1000, plancache.Place{At: plancache.AtRun, Dirs: [3]string{run, "/xdg/jail"}, UserDirs: true}, true, run + "/plans", ""},
		{"$XDG_RUNTIME_DIR's", 1000, plancache.Place{At: plancache.AtXDG, Dirs: [3]string{run, "/xdg/jail"}, Why: [3]plancache.Why{enoent}, UserDirs: true},
			true, "/xdg/jail/plans, in $XDG_RUNTIME_DIR: /run/user/1000 is missing", ""},
		{"the state directory's", 1000, plancache.Place{At: plancache.AtState, Dirs: [3]string{run, "", "/h/.local/state/jail/cache"},
			Why: [3]plancache.Why{enoent, plancache.Unset}, StateWhy: enoent, PlansWhy: enoent},
			true, "/h/.local/state/jail/cache/plans (the first run makes it), in the state directory: /run/user/1000 is missing; $XDG_RUNTIME_DIR is unset; and there is no /run/user (a container)", ""},
		{"none, on a login manager's host", 1000, plancache.Place{At: plancache.None, Dirs: [3]string{run, "", "/h/.local/state/jail/cache"},
			Why: [3]plancache.Why{enoent, plancache.Unset, plancache.NotHere}, UserDirs: true},
			false, "off, every run is planned anew: /run/user/1000 is missing; $XDG_RUNTIME_DIR is unset; the state directory is not used where /run/user exists",
			"set XDG_RUNTIME_DIR to a directory of yours, mode 0700"},
		{"none, in a container without HOME", 1000, plancache.Place{At: plancache.None, Dirs: [3]string{run, "/x/jail"},
			Why: [3]plancache.Why{enoent, plancache.NotPrivate, plancache.Unset}},
			false, "off, every run is planned anew: /run/user/1000 is missing; $XDG_RUNTIME_DIR /x is not the caller's alone (its owner, or a mode that lets others in); no state directory",
			"docker run --tmpfs /run/user/1000:uid=1000,mode=0700"},
		{"a state directory others may enter", 1000, plancache.Place{At: plancache.AtRun, Dirs: [3]string{run}, StateWhy: plancache.NotPrivate, PlansWhy: enoent},
			false, "off, every run is planned anew: /run/user/1000/jail is not the caller's alone", "chmod 700 /run/user/1000/jail"},
		{"plans others may enter", 1000, plancache.Place{At: plancache.AtRun, Dirs: [3]string{run}, PlansWhy: plancache.NotPrivate},
			false, "off, every run is planned anew: /run/user/1000/jail/plans is not the caller's alone", "chmod 700 /run/user/1000/jail/plans"},
	} {
		r := planCache(tc.p, tc.euid)
		if r.OK != tc.ok || !r.Optional || !strings.HasPrefix(r.Detail, tc.detail) ||
			(!tc.ok && (len(r.Fixes) == 0 || !strings.Contains(r.Fixes[0], tc.fix))) {
			t.Errorf("%s:\n%+v\nwant ok %v, detail %q..., first fix with %q", tc.what, r, tc.ok, tc.detail, tc.fix)
		}
	}
}

// TestReport: a line per check, its cause and fixes under a failure or a
// warning only; skipped and optional checks do not fail the report.
func TestReport(t *testing.T) {
	var b strings.Builder
	ok := report(&b, []Result{
		{Name: "a", OK: true, Detail: "fine", Fixes: []string{"never shown"}},
		{Name: "b", Optional: true, Detail: "missing", Fixes: []string{"f1"}},
		{Name: "c", Skipped: true, Detail: "does not apply"},
	})
	want := "ok    a: fine\nwarn  b: missing\n      fix: f1\nskip  c: does not apply\n"
	if !ok || b.String() != want {
		t.Errorf("report: %v\n%s\nwant\n%s", ok, b.String(), want)
	}
	b.Reset()
	ok = report(&b, []Result{{Name: "d", Detail: "refused", Cause: "why", Fixes: []string{"f1", "f2"}}})
	if want := "FAIL  d: refused\n      cause: why\n      fix: f1\n      fix: f2\n"; ok || b.String() != want {
		t.Errorf("report: %v\n%s\nwant\n%s", ok, b.String(), want)
	}
}
