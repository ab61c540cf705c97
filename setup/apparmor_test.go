package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAppArmorDoesNotApply: without the sysctl, with it 0, or without
// AppArmor's securityfs, the step writes nothing and says why.
func TestAppArmorDoesNotApply(t *testing.T) {
	for _, tc := range []struct {
		name, sysctl string // "" leaves it absent
		securityFS   bool
		want         string
	}{
		{"no sysctl", "", true, "does not apply: no AppArmor restriction on user namespaces here (kernel.apparmor_restrict_unprivileged_userns is absent)"},
		{"sysctl 0", "0\n", true, "does not apply: kernel.apparmor_restrict_unprivileged_userns is not 1"},
		{"no AppArmor", "1\n", false, "does not apply: AppArmor is not enabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := fakeHost(t)
			if tc.sysctl != "" {
				writeTest(t, h.ProcSys+"/kernel/apparmor_restrict_unprivileged_userns", tc.sysctl)
			}
			if tc.securityFS {
				mustMkdir(t, h.SecurityFS+"/apparmor")
			}
			c, err := appArmor(h)
			if err != nil || !strings.HasPrefix(c.None, tc.want) {
				t.Errorf("%+v, %v; want None %q", c, err, tc.want)
			}
			if entries, _ := os.ReadDir(h.AppArmorDir); len(entries) != 0 {
				t.Errorf("%s holds %d files", h.AppArmorDir, len(entries))
			}
		})
	}
}

// restricted is a fake Ubuntu 24.04: the sysctl 1, AppArmor on, no
// profile of jail's.
func restricted(t *testing.T) Host {
	h := fakeHost(t)
	writeTest(t, h.ProcSys+"/kernel/apparmor_restrict_unprivileged_userns", "1\n")
	writeTest(t, h.SecurityFS+"/apparmor/profiles", "snap.x (enforce)\n")
	return h
}

// TestAppArmorInstalls writes the profile for the binary's path, with the
// userns rule, loads it, and then finds it set.
func TestAppArmorInstalls(t *testing.T) {
	h := restricted(t)
	h.Binary = "/opt/my tools/jail"
	var loads []string
	load := h.LoadProfile
	h.LoadProfile = func(f string) error { loads = append(loads, f); return load(f) }
	file := filepath.Join(h.AppArmorDir, "jail")
	c, err := appArmor(h)
	if err != nil || c.Would != "write "+file+" (user namespaces for /opt/my tools/jail) and load it: apparmor_parser -r "+file {
		t.Fatalf("%+v, %v", c, err)
	}
	done, err := c.Apply()
	if err != nil || done != "wrote and loaded "+file+" (user namespaces for /opt/my tools/jail); AppArmor loads it again at boot" {
		t.Fatalf("%q, %v", done, err)
	}
	if len(loads) != 1 || loads[0] != file {
		t.Errorf("loaded %q, want [%q]", loads, file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"abi <abi/4.0>,\n", "\nprofile jail \"/opt/my tools/jail\" flags=(unconfined) {\n", "\n  userns,\n", "include if exists <local/jail>"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the profile lacks %q:\n%s", want, b)
		}
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode())
	}
	if entries, _ := os.ReadDir(h.AppArmorDir); len(entries) != 1 {
		t.Errorf("%s holds %d files, want the profile alone", h.AppArmorDir, len(entries))
	}
	c, err = appArmor(h)
	if err != nil || !strings.HasPrefix(c.None, "already set: "+file) {
		t.Errorf("after: %+v, %v", c, err)
	}
}

// TestAppArmorRewrites: a profile for another path (the binary moved) is
// rewritten and reloaded; one written but not loaded is loaded only.
func TestAppArmorRewrites(t *testing.T) {
	h := restricted(t)
	file := filepath.Join(h.AppArmorDir, "jail")
	writeTest(t, file, profile("/old/place/jail"))
	writeTest(t, h.SecurityFS+"/apparmor/profiles", "jail (unconfined)\n")
	c, err := appArmor(h)
	if err != nil || !strings.HasPrefix(c.Would, "write ") {
		t.Fatalf("moved binary: %+v, %v; want a rewrite", c, err)
	}
	if _, err := c.Apply(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), `"/usr/local/bin/jail"`) {
		t.Errorf("not rewritten:\n%s", b)
	}

	writeTest(t, h.SecurityFS+"/apparmor/profiles", "")
	c, err = appArmor(h)
	if err != nil || !strings.HasPrefix(c.Would, "load ") {
		t.Fatalf("not loaded: %+v, %v; want a load", c, err)
	}
	if done, err := c.Apply(); err != nil || !strings.HasPrefix(done, "loaded ") {
		t.Errorf("%q, %v", done, err)
	}
}

// TestAppArmorRefusesPaths a profile cannot name literally.
func TestAppArmorRefusesPaths(t *testing.T) {
	for _, bin := range []string{"jail", "/opt/j*/jail", `/opt/"q"/jail`, "/opt/a\nb/jail", "/opt/{a,b}/jail"} {
		h := restricted(t)
		h.Binary = bin
		if c, err := appArmor(h); err == nil {
			t.Errorf("%q: %+v, want an error", bin, c)
		}
	}
}

func TestRestrictsUserns(t *testing.T) {
	h := fakeHost(t)
	if RestrictsUserns(h.ProcSys) {
		t.Error("absent: restricts")
	}
	for v, want := range map[string]bool{"1\n": true, "0\n": false, "x": false} {
		writeTest(t, h.ProcSys+"/kernel/apparmor_restrict_unprivileged_userns", v)
		if RestrictsUserns(h.ProcSys) != want {
			t.Errorf("%q: want %v", v, want)
		}
	}
}
