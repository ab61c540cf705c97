package setup

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/cgroup"
)

func TestFavorDynModsOn(t *testing.T) {
	for _, tc := range []struct {
		name, table, want string
	}{
		{"off", v1Mounts, ""},
		{"setup's mount", v1Mounts + favorLine, "/run/cgroup-favordynmods"},
		{"cgroup2 mounted with it", "41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate,favordynmods\n", "/sys/fs/cgroup"},
		{"another filesystem's option", "50 1 0:70 / /mnt rw - tmpfs favordynmods rw,favordynmods\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := fakeHost(t)
			writeTest(t, h.Mountinfo, tc.table)
			got, err := FavorDynModsOn(h.Mountinfo)
			if err != nil || got != tc.want {
				t.Errorf("FavorDynModsOn = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := FavorDynModsOn("/nonexistent/mountinfo"); err == nil {
		t.Error("a missing mount table is no error")
	}
}

// TestFavorDynModsDoesNotApply: on v2 and without cgroups the step says
// so and mounts nothing.
func TestFavorDynModsDoesNotApply(t *testing.T) {
	for v, want := range map[cgroup.Version]string{cgroup.V2: "does not apply: on cgroup v2", cgroup.None: "does not apply: this host has no cgroups"} {
		h := fakeHost(t)
		h.Cgroup = cgroup.Host{Version: v}
		c, err := favorDynMods(h)
		if err != nil || !strings.HasPrefix(c.None, want) || c.Apply != nil {
			t.Errorf("%v: %+v, %v; want None %q", v, c, err, want)
		}
	}
}

func TestFavorDynModsSwitchesOn(t *testing.T) {
	h := fakeHost(t)
	var mounts []string
	mount := h.MountCgroup
	h.MountCgroup = func(dir, options string) error {
		mounts = append(mounts, dir+" "+options)
		return mount(dir, options)
	}
	c, err := favorDynMods(h)
	if err != nil || c.None != "" {
		t.Fatalf("%+v, %v; want a change", c, err)
	}
	if !strings.Contains(c.Would, "global") || !strings.Contains(c.Would, "until reboot") {
		t.Errorf("Would %q does not say it is global and lasts until reboot", c.Would)
	}
	done, err := c.Apply()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(done, "switched on") || !strings.Contains(done, "global") || !strings.Contains(done, "until reboot") {
		t.Errorf("done %q", done)
	}
	if want := h.FavorDir + " none,name=favordynmods,favordynmods"; len(mounts) != 1 || mounts[0] != want {
		t.Errorf("mounts %q, want [%q]", mounts, want)
	}
	if fi, err := os.Stat(h.FavorDir); err != nil || !fi.IsDir() {
		t.Errorf("%s not made: %v", h.FavorDir, err)
	}
	c, err = favorDynMods(h)
	if err != nil || c.None != "already on ("+h.FavorDir+"): moving a run into its cgroup does not wait for an RCU grace period" {
		t.Errorf("after: %+v, %v; want already on", c, err)
	}
}

func TestFavorDynModsMountFails(t *testing.T) {
	h := fakeHost(t)
	h.MountCgroup = func(string, string) error { return unix.EINVAL }
	c, _ := favorDynMods(h)
	if _, err := c.Apply(); err == nil || !strings.Contains(err.Error(), "Linux before 6.0") {
		t.Errorf("EINVAL: %v, want the kernel version hint", err)
	}
	// A mount the mount table does not show with the option is a failure.
	h.MountCgroup = func(string, string) error { return nil }
	c, _ = favorDynMods(h)
	if _, err := c.Apply(); err == nil || !strings.Contains(err.Error(), "shows no favordynmods") {
		t.Errorf("silent mount: %v", err)
	}
}
