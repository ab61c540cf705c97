package preflight

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// procSys makes a /proc/sys tree with the given sysctls (path: value).
func procSys(t *testing.T, sysctls map[string]string) string {
	dir := t.TempDir()
	for p, v := range sysctls {
		f := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestUsernsCauses: every cause the host shows is named, each with its own
// fix, the container's seccomp filter first (with jail's own profile
// before no filter at all); the sysctls and AppArmor that bind only
// unprivileged callers are not root's.
func TestUsernsCauses(t *testing.T) {
	const (
		filter   = "this process runs under a seccomp filter"
		maxZero  = "user.max_user_namespaces is 0"
		clone    = "kernel.unprivileged_userns_clone is 0"
		apparmor = "kernel.apparmor_restrict_unprivileged_userns is 1"
		limit    = "the user namespace limit is reached"
		unknown  = "no known setting refuses them here"
	)
	restrict := map[string]string{"kernel/apparmor_restrict_unprivileged_userns": "1"}
	for _, tc := range []struct {
		what     string
		euid     int
		filtered bool
		sysctls  map[string]string
		err      syscall.Errno
		want     []string
	}{
		{"a container's filter", 1000, true, nil, syscall.EPERM, []string{filter}},
		{"a container's filter, as root", 0, true, nil, syscall.EPERM, []string{filter}},
		{"a filter and AppArmor: the filter first", 1000, true, restrict, syscall.EPERM, []string{filter, apparmor}},
		{"AppArmor", 1000, false, restrict, syscall.EPERM, []string{apparmor}},
		{"AppArmor does not bind root", 0, false, restrict, syscall.EPERM, []string{unknown}},
		{"no user namespaces at all", 1000, false, map[string]string{"user/max_user_namespaces": "0"}, syscall.ENOSPC, []string{maxZero}},
		{"only root's", 1000, false, map[string]string{"kernel/unprivileged_userns_clone": "0"}, syscall.EPERM, []string{clone}},
		{"only root's, for root", 0, false, map[string]string{"kernel/unprivileged_userns_clone": "0"}, syscall.EPERM, []string{unknown}},
		{"the limit reached", 1000, false, map[string]string{"user/max_user_namespaces": "10"}, syscall.ENOSPC, []string{limit}},
		{"nothing known", 1000, false, nil, syscall.EPERM, []string{unknown}},
	} {
		cs := usernsCauses(host{euid: tc.euid, filtered: tc.filtered, procSys: procSys(t, tc.sysctls)}, tc.err)
		if len(cs) != len(tc.want) {
			t.Errorf("%s: %+v, want %q", tc.what, cs, tc.want)
			continue
		}
		for i, c := range cs {
			if !strings.HasPrefix(c.why, tc.want[i]) || c.fix == "" {
				t.Errorf("%s: cause %d %+v, want %q", tc.what, i, c, tc.want[i])
			}
		}
	}
	fix := usernsCauses(host{filtered: true, procSys: t.TempDir()}, syscall.EPERM)[0].fix
	if a, b := strings.Index(fix, "--security-opt seccomp=deploy/seccomp-jail.json"), strings.Index(fix, "unconfined"); a < 0 || b < a {
		t.Errorf("the filter's fix names jail's profile first: %q", fix)
	}
}
