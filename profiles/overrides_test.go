package profiles

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name    string
		profile string
		o       Overrides
		check   func(t *testing.T, p *Profile)
	}{
		{
			name: "workspace fills the profile's workspace", profile: "agent",
			o: Overrides{Workspace: "proj", Cwd0: "/home/u"},
			check: func(t *testing.T, p *Profile) {
				if m := findMount(p, "/workspace"); m == nil || m.Src != "/home/u/proj" || m.Type != "workspace" {
					t.Errorf("workspace = %+v", m)
				}
			},
		},
		{
			name: "workspace adds a mount when the profile has none", profile: "default",
			o: Overrides{Workspace: "/data/./proj/"},
			check: func(t *testing.T, p *Profile) {
				last := p.Mounts[len(p.Mounts)-1]
				if last != (Mount{Type: "workspace", Src: "/data/proj", Dst: "/workspace"}) {
					t.Errorf("last mount = %+v", last)
				}
			},
		},
		{
			name: "binds: relative made absolute, dst defaults to src, same dst replaces", profile: "minimal",
			o: Overrides{
				Binds:   []string{"out", "../data/", "/cache:/root/.cache/", "~/.npm:/npm"},
				ROBinds: []string{"/opt/sdk", "/srv/usr:/usr"},
				Cwd0:    "/home/u",
			},
			check: func(t *testing.T, p *Profile) {
				for dst, want := range map[string]Mount{
					"/home/u/out":  {Type: "bind", Src: "/home/u/out", Dst: "/home/u/out"},
					"/home/data":   {Type: "bind", Src: "/home/data", Dst: "/home/data"},
					"/root/.cache": {Type: "bind", Src: "/cache", Dst: "/root/.cache"},
					"/npm":         {Type: "bind", Src: "~/.npm", Dst: "/npm"},
					"/opt/sdk":     {Type: "ro-bind", Src: "/opt/sdk", Dst: "/opt/sdk"},
					"/usr":         {Type: "ro-bind", Src: "/srv/usr", Dst: "/usr"},
				} {
					if m := findMount(p, dst); m == nil || *m != want {
						t.Errorf("%s = %+v, want %+v", dst, m, want)
					}
				}
				if p.Mounts[0].Dst != "/usr" {
					t.Errorf("the /usr mount moved: %+v", p.Mounts[0])
				}
			},
		},
		{
			name: "tmpfs with size and mode", profile: "minimal",
			o: Overrides{Tmpfs: []string{"/scratch/", "/tmp:1G", "/x:16M:0700"}},
			check: func(t *testing.T, p *Profile) {
				for dst, want := range map[string]Mount{
					"/scratch": {Type: "tmpfs", Dst: "/scratch"},
					"/tmp":     {Type: "tmpfs", Dst: "/tmp", Size: 1 << 30},
					"/x":       {Type: "tmpfs", Dst: "/x", Size: 16 << 20, Mode: 0o700},
				} {
					if m := findMount(p, dst); m == nil || *m != want {
						t.Errorf("%s = %+v, want %+v", dst, m, want)
					}
				}
			},
		},
		{
			name: "env, keep-env, cwd, hostname, time", profile: "default",
			o: Overrides{
				Env:     []string{"FOO=bar=baz", "EMPTY=", "LANG=en_US.UTF-8"},
				KeepEnv: []string{"TERM", "PATH"},
				Cwd:     "/tmp", Hostname: "box", TimeLimit: "none",
			},
			check: func(t *testing.T, p *Profile) {
				if !reflect.DeepEqual(p.Env.Keep, []string{"TERM", "PATH"}) {
					t.Errorf("keep = %q", p.Env.Keep)
				}
				if _, ok := p.Env.Set["PATH"]; ok {
					t.Error("--keep-env PATH must drop env.set.PATH, or the flag does nothing")
				}
				if p.Env.Set["FOO"] != "bar=baz" || p.Env.Set["EMPTY"] != "" || p.Env.Set["LANG"] != "en_US.UTF-8" {
					t.Errorf("set = %q", p.Env.Set)
				}
				if p.Cwd != "/tmp" || p.Hostname != "box" || p.Limits.Time != 0 {
					t.Errorf("cwd %q hostname %q time %v", p.Cwd, p.Hostname, p.Limits.Time)
				}
			},
		},
		{
			name: "time limit", profile: "minimal", o: Overrides{TimeLimit: "90s"},
			check: func(t *testing.T, p *Profile) {
				if p.Limits.Time != 90*time.Second {
					t.Errorf("time = %v", p.Limits.Time)
				}
			},
		},
		{
			name: "time limit 0 is none, as the CLI documents", profile: "minimal", o: Overrides{TimeLimit: "0"},
			check: func(t *testing.T, p *Profile) {
				if p.Limits.Time != 0 {
					t.Errorf("time = %v", p.Limits.Time)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustLoad(t, tc.profile, Options{})
			if err := p.Apply(tc.o); err != nil {
				t.Fatal(err)
			}
			tc.check(t, p)
		})
	}
}

func TestApplyErrors(t *testing.T) {
	for _, tc := range []struct {
		o    Overrides
		want string
	}{
		{Overrides{Tmpfs: []string{"/x:lots"}}, `--tmpfs "/x:lots": size "lots": want bytes`},
		{Overrides{Tmpfs: []string{"/x:0"}}, `--tmpfs "/x:0": size "0": would mean no limit at all`},
		{Overrides{Tmpfs: []string{"/x:1M:999"}}, `--tmpfs "/x:1M:999": mode "999": want an octal mode`},
		{Overrides{Tmpfs: []string{"x"}}, `--tmpfs "x": must be absolute`},
		{Overrides{Tmpfs: []string{"/"}}, `--tmpfs "/": would replace the jail's root`},
		{Overrides{Binds: []string{"/a:b"}}, `--bind "/a:b": destination "b": must be absolute`},
		{Overrides{Binds: []string{"/"}}, `--bind "/": source: would give the jail the host's root`},
		{Overrides{Binds: []string{"rel"}}, `--bind "rel": source: "rel" is relative and the working directory is not known`},
		{Overrides{ROBinds: []string{"~/../x:/x"}}, `--ro-bind "~/../x:/x": source: must not contain ".."`},
		{Overrides{ROBinds: []string{"/..:/x"}}, `--ro-bind "/..:/x": source: would give the jail the host's root`},
		{Overrides{ROBinds: []string{"~/x"}}, `--ro-bind "~/x": give a destination for a source under ~: SRC:DST`},
		{Overrides{Env: []string{"NOVALUE"}}, `--env "NOVALUE": want KEY=VALUE`},
		{Overrides{Env: []string{"=x"}}, `--env "=x": a variable name must not be empty`},
		{Overrides{Env: []string{"A=\x00"}}, `--env "A=\x00": a value must not contain NUL`},
		{Overrides{KeepEnv: []string{"A=B"}}, `--keep-env "A=B": a variable name must not contain '=' or NUL`},
		{Overrides{Cwd: "work"}, `--cwd "work": must be absolute`},
		{Overrides{Hostname: "a b"}, `--hostname "a b": only letters, digits`},
		{Overrides{TimeLimit: "soon"}, `--time-limit "soon": want a duration`},
		{Overrides{Workspace: "/"}, `--workspace "/": would give the jail the host's root`},
	} {
		p := mustLoad(t, "default", Options{})
		before := p.clone()
		err := p.Apply(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Apply(%+v) = %v, want %q", tc.o, err, tc.want)
		}
		if !reflect.DeepEqual(p, before) {
			t.Errorf("Apply(%+v) failed but changed the profile", tc.o)
		}
	}
}

// TestApplyReportsAll checks that every bad flag is reported at once.
func TestApplyReportsAll(t *testing.T) {
	p := mustLoad(t, "default", Options{})
	err := p.Apply(Overrides{Tmpfs: []string{"/x:lots"}, Env: []string{"A"}, Cwd: "rel"})
	if err == nil || strings.Count(err.Error(), "\n") != 2 {
		t.Errorf("Apply = %v, want three errors", err)
	}
}
