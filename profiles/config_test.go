package profiles

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/testfiles"
	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/mount"
)

var hostEnv = []string{
	"HOME=/home/u", "PATH=/host/bin", "TERM=xterm", "SECRET_TOKEN=hunter2", "SSH_AUTH_SOCK=/run/ssh",
}

func mustConfig(t *testing.T, p *Profile, argv, env []string) jail.Config {
	t.Helper()
	c, err := p.Config(argv, env)
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	return c
}

func specAt(c jail.Config, dst string) *mount.Spec {
	for i := range c.Mounts {
		if c.Mounts[i].Dst == dst {
			return &c.Mounts[i]
		}
	}
	return nil
}

func TestConfigMinimal(t *testing.T) {
	p := mustLoad(t, "minimal", Options{})
	c := mustConfig(t, p, []string{"true"}, hostEnv)
	if c.Profile != "minimal" || len(p.Hash()) != 64 {
		t.Errorf("Profile %q Hash %q", c.Profile, p.Hash())
	}
	if !slices.Equal(c.Argv, []string{"true"}) || c.Dir != "/" || c.Hostname != "jail" || !c.NewSession {
		t.Errorf("argv %q dir %q hostname %q new_session %v", c.Argv, c.Dir, c.Hostname, c.NewSession)
	}
	if c.UID != 1000 || c.GID != 1000 || c.HostUID != 65534 || c.HostGID != 65534 {
		t.Errorf("ids %d %d %d %d", c.UID, c.GID, c.HostUID, c.HostGID)
	}
	// Nothing from the host: invariant 5. With no network, package
	// managers are told not to retry.
	wantEnv := []string{
		"HOME=/tmp", "LANG=C.UTF-8", "PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
		"PIP_RETRIES=0", "npm_config_fetch_retries=0",
	}
	if !slices.Equal(c.Env, wantEnv) {
		t.Errorf("env = %q, want %q", c.Env, wantEnv)
	}
	wantLimits := []jail.Rlimit{
		{Resource: unix.RLIMIT_CORE, Soft: 0, Hard: 0},
		{Resource: unix.RLIMIT_NOFILE, Soft: 1024, Hard: 1024},
		{Resource: unix.RLIMIT_FSIZE, Soft: 1 << 30, Hard: 1 << 30},
	}
	if !reflect.DeepEqual(c.Rlimits, wantLimits) || c.TimeLimit != 10*time.Minute {
		t.Errorf("rlimits %+v time %v", c.Rlimits, c.TimeLimit)
	}
	wantMounts := []mount.Spec{
		{Kind: mount.ReadOnlyBind, Src: "/usr", Dst: "/usr"},
		{Kind: mount.ReadOnlyBind, Src: "/bin", Dst: "/bin", Optional: true},
		{Kind: mount.ReadOnlyBind, Src: "/sbin", Dst: "/sbin", Optional: true},
		{Kind: mount.ReadOnlyBind, Src: "/lib", Dst: "/lib", Optional: true},
		{Kind: mount.ReadOnlyBind, Src: "/lib32", Dst: "/lib32", Optional: true},
		{Kind: mount.ReadOnlyBind, Src: "/lib64", Dst: "/lib64", Optional: true},
		{Kind: mount.ReadOnlyBind, Src: "/libx32", Dst: "/libx32", Optional: true},
		{Kind: mount.Proc, Dst: "/proc"},
		{Kind: mount.Dev, Dst: "/dev"},
		{Kind: mount.Tmpfs, Dst: "/tmp", Size: 256 << 20, Mode: 0o1777},
		// jail's resolver, generated for every network mode but host.
		{Kind: mount.File, Dst: "/etc/resolv.conf", Mode: 0o644, Content: []byte("nameserver 127.0.0.1\noptions attempts:1\n")},
	}
	if !reflect.DeepEqual(c.Mounts, wantMounts) {
		t.Errorf("mounts:\n%+v\nwant:\n%+v", c.Mounts, wantMounts)
	}
}

func TestConfigEnv(t *testing.T) {
	dir := testfiles.Write(t, map[string]string{"p.toml": `
extends = "minimal"
[env]
keep = ["TERM", "PATH", "NOT_ON_HOST"]
[env.set]
ZED = "last"
A = "first"
`})
	p := mustLoad(t, filepath.Join(dir, "p.toml"), Options{})
	c := mustConfig(t, p, []string{"env"}, append(hostEnv, "TERM=screen"))
	want := []string{
		"A=first", "HOME=/tmp", "LANG=C.UTF-8",
		"PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
		"PIP_RETRIES=0", "ZED=last", "npm_config_fetch_retries=0",
	}
	if !slices.Equal(c.Env, want) {
		t.Errorf("env = %q, want %q", c.Env, want)
	}
	// Kept host variables are read when the jail starts; set wins, so
	// PATH is not among them.
	if keep := []string{"TERM", "NOT_ON_HOST"}; !slices.Equal(c.KeepEnv, keep) {
		t.Errorf("keep = %q, want %q", c.KeepEnv, keep)
	}
}

func TestConfigPasswd(t *testing.T) {
	for _, tc := range []struct {
		name          string
		uid, gid      uint32
		home          string
		passwd, group string
	}{
		{
			"jail", 1000, 1000, "/tmp",
			"root:x:0:0:root:/root:/usr/sbin/nologin\njail:x:1000:1000:jail:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
			"root:x:0:\njail:x:1000:\nnogroup:x:65534:\n",
		},
		{
			"dev", 0, 0, "",
			"root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
			"root:x:0:\nnogroup:x:65534:\n",
		},
		{
			"dev", 65534, 100, "/bad:home",
			"root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
			"root:x:0:\ndev:x:100:\nnogroup:x:65534:\n",
		},
		{
			"dev", 2000, 3000, "",
			"root:x:0:0:root:/root:/usr/sbin/nologin\ndev:x:2000:3000:dev:/:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
			"root:x:0:\ndev:x:3000:\nnogroup:x:65534:\n",
		},
	} {
		p := mustLoad(t, "default", Options{})
		p.User.Name, p.User.UID, p.User.GID = tc.name, tc.uid, tc.gid
		if tc.home == "" {
			delete(p.Env.Set, "HOME")
		} else {
			p.Env.Set["HOME"] = tc.home
		}
		c := mustConfig(t, p, []string{"id"}, nil)
		pw, gr := specAt(c, "/etc/passwd"), specAt(c, "/etc/group")
		if pw == nil || gr == nil {
			t.Fatalf("%s: no /etc/passwd or /etc/group", tc.name)
		}
		if pw.Kind != mount.File || pw.Mode != 0o644 || string(pw.Content) != tc.passwd {
			t.Errorf("%s %d: /etc/passwd = %+v\n%s", tc.name, tc.uid, pw, pw.Content)
		}
		if gr.Kind != mount.File || gr.Mode != 0o644 || string(gr.Content) != tc.group {
			t.Errorf("%s %d: /etc/group = %+v\n%s", tc.name, tc.gid, gr, gr.Content)
		}
	}

	// No name: no files; the profile's own /etc/passwd: not replaced.
	p := mustLoad(t, "minimal", Options{})
	if c := mustConfig(t, p, []string{"id"}, nil); specAt(c, "/etc/passwd") != nil {
		t.Error("minimal (no user.name) got an /etc/passwd")
	}
	p = mustLoad(t, "default", Options{})
	p.Mounts = append(p.Mounts, Mount{Type: "file", Dst: "/etc/passwd", Content: "mine\n"})
	c := mustConfig(t, p, []string{"id"}, nil)
	if pw := specAt(c, "/etc/passwd"); string(pw.Content) != "mine\n" || specAt(c, "/etc/group") == nil {
		t.Errorf("/etc/passwd = %q", pw.Content)
	}
	n := 0
	for _, m := range c.Mounts {
		if m.Dst == "/etc/passwd" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("/etc/passwd mounted %d times", n)
	}
}

func TestConfigMounts(t *testing.T) {
	p := mustLoad(t, "agent", Options{})
	_, err := p.Config([]string{"ls"}, hostEnv)
	if err == nil || err.Error() != `profile "agent" mounts a workspace at /workspace: give --workspace DIR` {
		t.Errorf("Config without --workspace = %v", err)
	}
	if err := p.Apply(Overrides{Workspace: "/home/u/proj", Binds: []string{"~/.cache/pip:/cache"}}); err != nil {
		t.Fatal(err)
	}
	c := mustConfig(t, p, []string{"ls"}, hostEnv)
	if ws := specAt(c, "/workspace"); ws == nil || !reflect.DeepEqual(*ws, mount.Spec{Kind: mount.Bind, Src: "/home/u/proj", Dst: "/workspace",
		IfMissing: "create the workspace first, or give --workspace a directory that exists"}) {
		t.Errorf("workspace = %+v", ws)
	}
	if m := specAt(c, "/cache"); m == nil || m.Src != "/home/u/.cache/pip" || m.Kind != mount.Bind {
		t.Errorf("~ bind = %+v", m)
	}
	if c.Dir != "/workspace" || !slices.Contains(c.Env, "HOME=/workspace") {
		t.Errorf("dir %q env %q", c.Dir, c.Env)
	}
	if _, err := p.Config([]string{"ls"}, []string{"PATH=/bin"}); err == nil || !strings.Contains(err.Error(), "HOME is not set") {
		t.Errorf("Config with ~ and no HOME = %v", err)
	}
	if h := specAt(c, "/etc/hosts"); h == nil || h.Kind != mount.File || h.Mode != 0o644 || !strings.HasPrefix(string(h.Content), "127.0.0.1 localhost") {
		t.Errorf("/etc/hosts = %+v", h)
	}
}

func TestConfigRlimits(t *testing.T) {
	dir := testfiles.Write(t, map[string]string{"p.toml": `
[limits]
nproc = "unlimited"
cpu_time = "1m30s"
as = "4G"
stack = 8388608
`})
	c := mustConfig(t, mustLoad(t, filepath.Join(dir, "p.toml"), Options{}), []string{"x"}, nil)
	want := []jail.Rlimit{
		{Resource: unix.RLIMIT_NPROC, Soft: unix.RLIM_INFINITY, Hard: unix.RLIM_INFINITY},
		{Resource: unix.RLIMIT_CPU, Soft: 90, Hard: 91},
		{Resource: unix.RLIMIT_AS, Soft: 4 << 30, Hard: 4 << 30},
		{Resource: unix.RLIMIT_STACK, Soft: 8 << 20, Hard: 8 << 20},
	}
	if !reflect.DeepEqual(c.Rlimits, want) || c.TimeLimit != 0 {
		t.Errorf("rlimits = %+v time %v", c.Rlimits, c.TimeLimit)
	}
}

// TestConfigRechecks checks that a profile changed in code is held to the
// rules Load applies (invariants 1 and 10).
func TestConfigRechecks(t *testing.T) {
	for name, change := range map[string]func(p *Profile){
		"host root":     func(p *Profile) { p.User.HostUID = 0 },
		"network":       func(p *Profile) { p.Network.Mode = "bridge" },
		"relative dst":  func(p *Profile) { p.Mounts[0].Dst = "usr" },
		"unknown type":  func(p *Profile) { p.Mounts[0].Type = "overlay" },
		"size on bind":  func(p *Profile) { p.Mounts[0].Size = 1 },
		"duplicate dst": func(p *Profile) { p.Mounts = append(p.Mounts, p.Mounts[0]) },
		"env name":      func(p *Profile) { p.Env.Set["A=B"] = "x" },
		"uid -1":        func(p *Profile) { p.User.UID = 1<<32 - 1 },
	} {
		p := mustLoad(t, "minimal", Options{})
		change(p)
		if _, err := p.Config([]string{"x"}, nil); err == nil {
			t.Errorf("%s: Config accepted it", name)
		}
	}
	if _, err := mustLoad(t, "minimal", Options{}).Config(nil, nil); err == nil {
		t.Error("Config with no command succeeded")
	}
}

// The jail's /etc/resolv.conf names jail's resolver, except when the jail
// has the host's network (there 127.0.0.1:53 is the host's), and a
// profile's own mount there wins.
func TestConfigResolvConf(t *testing.T) {
	resolv := func(c jail.Config) (mount.Spec, int) {
		var found mount.Spec
		n := 0
		for _, m := range c.Mounts {
			if m.Dst == "/etc/resolv.conf" {
				found, n = m, n+1
			}
		}
		return found, n
	}
	p := mustLoad(t, "default", Options{})
	if m, n := resolv(mustConfig(t, p, []string{"true"}, hostEnv)); n != 1 || m.Kind != mount.File || string(m.Content) != resolvConf {
		t.Errorf("network none: %d mounts at /etc/resolv.conf, %+v; want the generated one", n, m)
	}
	p.Network.Mode = networkHost
	if _, n := resolv(mustConfig(t, p, []string{"true"}, hostEnv)); n != 0 {
		t.Errorf("network host: %d mounts at /etc/resolv.conf, want none", n)
	}
	p.Network.Mode = networkNone
	p.Mounts = append(p.Mounts, Mount{Type: "ro-bind", Src: "/etc/hosts", Dst: "/etc/resolv.conf"})
	if m, n := resolv(mustConfig(t, p, []string{"true"}, hostEnv)); n != 1 || m.Kind != mount.ReadOnlyBind {
		t.Errorf("a profile's own: %d mounts at /etc/resolv.conf, %+v; want the profile's", n, m)
	}
}
