package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/cgroup"
)

// The mount table lines of a v1 host like this one, without favordynmods.
const v1Mounts = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

// favorLine is the line the kernel adds for setup's mount.
const favorLine = "90 25 0:60 / /run/cgroup-favordynmods rw,relatime - cgroup cgroup rw,name=favordynmods,favordynmods\n"

// fakeHost is a host under a temporary directory: v1 hierarchies for
// memory, pids, and cpu with cpuacct, a mount table, /proc/sys, securityfs
// and /etc/apparmor.d; mounting appends to the mount table, loading a
// profile lists it as loaded.
func fakeHost(t *testing.T) Host {
	t.Helper()
	root := t.TempDir()
	h := Host{
		Cgroup:      cgroup.Host{Version: cgroup.V1, V1: map[string]string{}},
		Mountinfo:   filepath.Join(root, "mountinfo"),
		ProcSys:     filepath.Join(root, "proc/sys"),
		SecurityFS:  filepath.Join(root, "security"),
		AppArmorDir: filepath.Join(root, "apparmor.d"),
		FavorDir:    filepath.Join(root, "run/cgroup-favordynmods"),
		Binary:      "/usr/local/bin/jail",
	}
	for c, dir := range map[string]string{"memory": "memory", "pids": "pids", "cpu": "cpu,cpuacct", "cpuacct": "cpu,cpuacct"} {
		h.Cgroup.V1[c] = filepath.Join(root, "cgroup", dir)
	}
	for _, d := range []string{h.Cgroup.V1["memory"], h.Cgroup.V1["pids"], h.Cgroup.V1["cpu"], h.ProcSys + "/kernel", h.AppArmorDir} {
		mustMkdir(t, d)
	}
	writeTest(t, h.Mountinfo, v1Mounts)
	h.MountCgroup = func(dir, options string) error {
		f, err := os.OpenFile(h.Mountinfo, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString(strings.Replace(favorLine, "/run/cgroup-favordynmods", dir, 1))
		return err
	}
	h.LoadProfile = func(file string) error {
		if _, err := os.Stat(file); err != nil {
			return err
		}
		writeTest(t, filepath.Join(h.SecurityFS, "apparmor/profiles"), "snap.x (enforce)\njail (unconfined)\n")
		return nil
	}
	return h
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeTest(t *testing.T, file, data string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(file))
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree lists every path under dir with its mode, owner and content.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		line := fmt.Sprintf("%s %o %d:%d", p, st.Mode, st.Uid, st.Gid)
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			line += " " + string(b)
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestRunDryRunChangesNothing: --dry-run says what every step would do on
// a v1 host with nothing set, and the tree stays as it was.
func TestRunDryRunChangesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the delegation step checks /jail is root's: run as root")
	}
	h := fakeHost(t)
	writeTest(t, h.ProcSys+"/kernel/apparmor_restrict_unprivileged_userns", "1\n")
	mustMkdir(t, h.SecurityFS+"/apparmor")
	h.MountCgroup = func(string, string) error { t.Error("a dry run mounted"); return nil }
	h.LoadProfile = func(string) error { t.Error("a dry run loaded a profile"); return nil }
	root := filepath.Dir(h.Mountinfo)
	before := tree(t, root)
	var out bytes.Buffer
	if err := Run(h, Steps([]int{4242}), true, &out); err != nil {
		t.Fatal(err)
	}
	if after := tree(t, root); after != before {
		t.Errorf("the dry run changed the tree:\n%s\nwas:\n%s", after, before)
	}
	want := []string{
		"favordynmods: would switch on: mkdir -p " + h.FavorDir + " && mount -t cgroup -o none,name=favordynmods,favordynmods cgroup " + h.FavorDir + "; global",
		"delegation: would make /jail/user-4242 uid 4242's in memory, pids, cpu,cpuacct (until reboot",
		"apparmor: would write " + h.AppArmorDir + "/jail (user namespaces for /usr/local/bin/jail) and load it: apparmor_parser -r " + h.AppArmorDir + "/jail",
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d:\n got %s\nwant %s...", i+1, lines[i], w)
		}
	}
}

// TestRunTwice: a run applies every step; the second finds each set and
// changes nothing.
func TestRunTwice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the delegation step gives directories to another uid: run as root")
	}
	h := fakeHost(t)
	writeTest(t, h.ProcSys+"/kernel/apparmor_restrict_unprivileged_userns", "1\n")
	mustMkdir(t, h.SecurityFS+"/apparmor")
	var first bytes.Buffer
	if err := Run(h, Steps([]int{4242}), false, &first); err != nil {
		t.Fatalf("%v\n%s", err, first.String())
	}
	for _, prefix := range []string{"favordynmods: switched on", "delegation: made /jail/user-4242", "apparmor: wrote and loaded"} {
		if !strings.Contains(first.String(), "\n"+prefix) && !strings.HasPrefix(first.String(), prefix) {
			t.Errorf("first run: no line %q in\n%s", prefix, first.String())
		}
	}
	root := filepath.Dir(h.Mountinfo)
	before := tree(t, root)
	h.MountCgroup = func(string, string) error { t.Error("the second run mounted"); return nil }
	h.LoadProfile = func(string) error { t.Error("the second run loaded a profile"); return nil }
	var second bytes.Buffer
	if err := Run(h, Steps([]int{4242}), false, &second); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(second.String()), "\n") {
		if !strings.Contains(l, ": already ") {
			t.Errorf("second run: %q does not say already", l)
		}
	}
	if after := tree(t, root); after != before {
		t.Errorf("the second run changed the tree:\n%s\nwas:\n%s", after, before)
	}
}

// TestRunFailures: a failed step does not stop the next; the error names
// each that failed, on one line.
func TestRunFailures(t *testing.T) {
	fail := func(Host) (Change, error) { return Change{}, errors.New("cannot look") }
	applyFails := func(Host) (Change, error) {
		return Change{Would: "x", Apply: func() (string, error) { return "", errors.New("cannot change") }}, nil
	}
	ok := func(Host) (Change, error) {
		return Change{Would: "y", Apply: func() (string, error) { return "changed y", nil }}, nil
	}
	var out bytes.Buffer
	err := Run(Host{}, []Step{{"a", fail}, {"b", applyFails}, {"c", ok}}, false, &out)
	if err == nil || err.Error() != "a: cannot look; b: cannot change" {
		t.Errorf("error %v, want a's and b's on one line", err)
	}
	if out.String() != "c: changed y\n" {
		t.Errorf("output %q, want c's line only", out.String())
	}
}
