package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/cgroup"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the delegation step gives directories to other uids and checks /jail is root's: run as root")
	}
}

func ownerOf(t *testing.T, p string) int {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return int(st.Uid)
}

// TestDelegateDoesNotApply: v2, no cgroups, no user named (or only root):
// nothing to do, and said why.
func TestDelegateDoesNotApply(t *testing.T) {
	h := fakeHost(t)
	for _, tc := range []struct {
		name    string
		version cgroup.Version
		users   []int
		want    string
	}{
		{"v2", cgroup.V2, []int{1000}, "does not apply: on cgroup v2 an unprivileged caller's runs go under its own cgroup"},
		{"no cgroups", cgroup.None, []int{1000}, "does not apply: this host has no cgroups"},
		{"no user", cgroup.V1, nil, "no user to delegate to: name them with --user NAME"},
		{"root", cgroup.V1, []int{0}, "no user to delegate to"},
	} {
		hh := h
		hh.Cgroup.Version = tc.version
		c, err := delegate(hh, tc.users)
		if err != nil || !strings.HasPrefix(c.None, tc.want) {
			t.Errorf("%s: %+v, %v; want None %q", tc.name, c, err, tc.want)
		}
	}
	empty := h
	empty.Cgroup.V1 = map[string]string{"cpuset": "/sys/fs/cgroup/cpuset"}
	if c, err := delegate(empty, []int{1000}); err != nil || !strings.HasPrefix(c.None, "does not apply: cgroup v1 has none") {
		t.Errorf("no hierarchy of jail's: %+v, %v", c, err)
	}
}

// TestDelegate makes /jail (root's, 0755) and /jail/user-UID (the
// user's) in each hierarchy once, cpu and cpuacct sharing one; a second
// plan finds them set.
func TestDelegate(t *testing.T) {
	needRoot(t)
	h := fakeHost(t)
	c, err := delegate(h, []int{4242, 4243})
	if err != nil || c.None != "" {
		t.Fatalf("%+v, %v; want a change", c, err)
	}
	want := "make /jail/user-4242 uid 4242's in memory, pids, cpu,cpuacct; /jail/user-4243 uid 4243's in memory, pids, cpu,cpuacct (until reboot: cgroupfs keeps nothing)"
	if c.Would != want {
		t.Errorf("Would\n %q\nwant\n %q", c.Would, want)
	}
	done, err := c.Apply()
	if err != nil {
		t.Fatal(err)
	}
	if done != "made"+strings.TrimPrefix(want, "make") {
		t.Errorf("done %q", done)
	}
	for _, m := range []string{h.Cgroup.V1["memory"], h.Cgroup.V1["pids"], h.Cgroup.V1["cpu"]} {
		top := filepath.Join(m, "jail")
		if fi, err := os.Stat(top); err != nil || fi.Mode().Perm() != 0o755 || ownerOf(t, top) != 0 {
			t.Errorf("%s: %v, %v, uid %d; want root's, 0755", top, fi.Mode(), err, ownerOf(t, top))
		}
		for _, u := range []int{4242, 4243} {
			d := filepath.Join(m, cgroup.DefaultParent(cgroup.V1, u))
			if got := ownerOf(t, d); got != u {
				t.Errorf("%s belongs to %d, want %d", d, got, u)
			}
		}
	}
	c, err = delegate(h, []int{4242, 4243})
	if err != nil || c.None != "already set: /jail/user-4242 is uid 4242's in memory, pids, cpu,cpuacct; /jail/user-4243 is uid 4243's in memory, pids, cpu,cpuacct" {
		t.Errorf("after: %+v, %v", c, err)
	}
}

// TestDelegateGives: a user directory that exists but is another's is
// given to the user, as the loop's chown does; only where it is not yet.
func TestDelegateGives(t *testing.T) {
	needRoot(t)
	h := fakeHost(t)
	for _, m := range []string{h.Cgroup.V1["memory"], h.Cgroup.V1["pids"], h.Cgroup.V1["cpu"]} {
		mustMkdir(t, filepath.Join(m, "jail/user-4242"))
		if err := os.Chown(filepath.Join(m, "jail/user-4242"), 4242, -1); err != nil {
			t.Fatal(err)
		}
	}
	other := filepath.Join(h.Cgroup.V1["pids"], "jail/user-4242")
	if err := os.Chown(other, 0, -1); err != nil {
		t.Fatal(err)
	}
	c, err := delegate(h, []int{4242})
	if err != nil || c.Would != "make /jail/user-4242 uid 4242's in pids (until reboot: cgroupfs keeps nothing)" {
		t.Fatalf("%+v, %v", c, err)
	}
	if _, err := c.Apply(); err != nil {
		t.Fatal(err)
	}
	if got := ownerOf(t, other); got != 4242 {
		t.Errorf("%s belongs to %d", other, got)
	}
}

// TestDelegateRefuses: a /jail another user owns or may write, or a user
// directory that is not one, is an error, and nothing is changed.
func TestDelegateRefuses(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		name  string
		ready func(top string) error
		want  string
	}{
		{"another's", func(top string) error { return os.Chown(top, 4242, -1) }, "belongs to uid 4242 or is writable by others"},
		{"group-writable", func(top string) error { return os.Chmod(top, 0o775) }, "(mode 775)"},
		{"a file as the user's", func(top string) error { return os.WriteFile(filepath.Join(top, "user-4242"), nil, 0o644) }, "user-4242 is not a directory"},
		{"a symlink as /jail", func(top string) error {
			if err := os.Remove(top); err != nil {
				return err
			}
			return os.Symlink("/tmp", top)
		}, "jail is not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := fakeHost(t)
			top := filepath.Join(h.Cgroup.V1["memory"], "jail")
			mustMkdir(t, top)
			if err := os.Chmod(top, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.ready(top); err != nil {
				t.Fatal(err)
			}
			c, err := delegate(h, []int{4242})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v, %v; want an error with %q", c, err, tc.want)
			}
		})
	}
}
