package profiles

import (
	"fmt"
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
			name: "paths holding a colon", profile: "minimal",
			o: Overrides{
				Binds:   []string{`/srv/a\:b`, `/srv/c\:d:/data/e\:f`, `/srv/g\\:/h`},
				ROBinds: []string{`rel\:x`, `/srv/back\slash:/bs`},
				Tmpfs:   []string{`/t\:1:1M:0700`},
				Cwd0:    "/home/u",
			},
			check: func(t *testing.T, p *Profile) {
				for dst, want := range map[string]Mount{
					"/srv/a:b":      {Type: "bind", Src: "/srv/a:b", Dst: "/srv/a:b"},
					"/data/e:f":     {Type: "bind", Src: "/srv/c:d", Dst: "/data/e:f"},
					"/h":            {Type: "bind", Src: `/srv/g\`, Dst: "/h"},
					"/home/u/rel:x": {Type: "ro-bind", Src: "/home/u/rel:x", Dst: "/home/u/rel:x"},
					"/bs":           {Type: "ro-bind", Src: `/srv/back\slash`, Dst: "/bs"},
					"/t:1":          {Type: "tmpfs", Dst: "/t:1", Size: 1 << 20, Mode: 0o700},
				} {
					if m := findMount(p, dst); m == nil || *m != want {
						t.Errorf("%s = %+v, want %+v", dst, m, want)
					}
				}
			},
		},
		{
			name: "tmpfs with size and mode", profile: "minimal",
			o: Overrides{Tmpfs: []string{"/scratch/", "/tmp:1G", "/x:16M:0700", "/y:16MiB", "/z:0.5GB"}},
			check: func(t *testing.T, p *Profile) {
				for dst, want := range map[string]Mount{
					"/scratch": {Type: "tmpfs", Dst: "/scratch"},
					"/tmp":     {Type: "tmpfs", Dst: "/tmp", Size: 1 << 30},
					"/x":       {Type: "tmpfs", Dst: "/x", Size: 16 << 20, Mode: 0o700},
					"/y":       {Type: "tmpfs", Dst: "/y", Size: 16 << 20},
					"/z":       {Type: "tmpfs", Dst: "/z", Size: 512 << 20},
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
				Cwd:     "/tmp", Hostname: "box", TimeLimit: new(time.Duration(0)),
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
			name: "time limit", profile: "minimal", o: Overrides{TimeLimit: new(90 * time.Second)},
			check: func(t *testing.T, p *Profile) {
				if p.Limits.Time != 90*time.Second {
					t.Errorf("time = %v", p.Limits.Time)
				}
			},
		},
		{
			name: "typed limits", profile: "default",
			o: Overrides{
				Memory: new(uint64(256 << 20)), Pids: new(Unlimited), CPU: new(0.5), MaxOutput: new(uint64(0)),
				LimitsMode: LimitsBestEffort, Network: NetworkAllowlist, Allow: []string{"example.com"},
			},
			check: func(t *testing.T, p *Profile) {
				l := p.Limits
				if *l.Memory != 256<<20 || *l.Pids != Unlimited || *l.CPU != 0.5 || *l.MaxOutput != 0 || l.Mode != "best-effort" {
					t.Errorf("limits = memory %d pids %d cpu %v max output %d mode %q", *l.Memory, *l.Pids, *l.CPU, *l.MaxOutput, l.Mode)
				}
				if p.Network.Mode != "allowlist" || !reflect.DeepEqual(p.Network.Allow, []string{"example.com"}) {
					t.Errorf("network = %+v", p.Network)
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

// TestApplyErrors pins the messages of bad flag values, as the CLI gives
// them (Flags, parsed).
func TestApplyErrors(t *testing.T) {
	for _, tc := range []struct {
		o    Overrides
		want string
	}{
		{Overrides{Binds: []string{"/a:b:/c"}}, `--bind "/a:b:/c": want SRC or SRC:DST; write a ':' inside a path as \: (--bind '/data/a\:b:/b')`},
		{Overrides{ROBinds: []string{"/a:/b:c"}}, `--ro-bind "/a:/b:c": want SRC or SRC:DST; write a ':' inside a path as \: (--ro-bind '/data/a\:b:/b')`},
		{Overrides{Binds: []string{`\:/x`}}, `--bind "\\:/x": source: ":/x" is relative`},
		{Overrides{Tmpfs: []string{"/x:1M:0700:y"}}, `--tmpfs "/x:1M:0700:y": want DST[:SIZE[:MODE]]; write a ':' inside a path as \: (--tmpfs '/a\:b:64M')`},
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
		{Flags{TimeLimit: "soon"}.Parse(), `--time-limit "soon": want a duration`},
		{Flags{TimeLimit: "-1s"}.Parse(), `--time-limit "-1s": must not be negative`},
		{Flags{Memory: "lots"}.Parse(), `--memory "lots": want bytes (1048576), a number with K, M, G or T, also written Ki, KiB or KB, all 1024-based ("512M", "512MiB" and "512MB" are each 512 MiB; "1.5G"), or "unlimited"`},
		{Flags{Memory: "1K"}.Parse(), `--memory "1K": want at least 4M (the jail itself needs that), or "unlimited"`},
		{Flags{Memory: "99999999999T"}.Parse(), `--memory "99999999999T": too large`},
		{Flags{Pids: "3"}.Parse(), `--pids "3": want at least 4 (the jail's PID 1, the command, and jail's own start-up), or "unlimited"`},
		{Flags{Pids: "-3"}.Parse(), `--pids "-3": must not be negative`},
		{Flags{Pids: "many"}.Parse(), `--pids "many": want a whole number or "unlimited"`},
		{Flags{Pids: "4294967296"}.Parse(), `--pids "4294967296": too large`},
		{Flags{CPU: "0"}.Parse(), `--cpu "0": want at least 0.01 cores and at most 4096, or "unlimited"`},
		{Flags{CPU: "half"}.Parse(), `--cpu "half": want a number of cores such as 1, 0.5 or 2.0, or "unlimited"`},
		{Flags{MaxOutput: "1X"}.Parse(), `--max-output "1X": want bytes (1048576), a number with K, M, G or T, also written Ki, KiB or KB, all 1024-based`},
		{Overrides{LimitsMode: "soft"}, `--limits-mode "soft": want "enforce"`},
		{Overrides{Network: "lan"}, `--network "lan": unknown mode: want "none", "allowlist" or "host"`},
		{Overrides{Network: NetworkNone, Allow: []string{"example.com"}}, `--network "none": --allow and --pin-host need --network allowlist`},
		// Typed values a library gives are held to the same rules.
		{Overrides{TimeLimit: new(-time.Second)}, `--time-limit "-1s": must not be negative`},
		{Overrides{Memory: new(uint64(1024))}, `--memory "1024": want at least 4M`},
		{Overrides{Pids: new(uint64(2))}, `--pids "2": want at least 4`},
		{Overrides{CPU: new(0.001)}, `--cpu "0.001": want at least 0.01 cores`},
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

// TestApplyReportsAll checks that every bad flag is reported at once, those
// Flags.Parse could not read in their place among the others.
func TestApplyReportsAll(t *testing.T) {
	p := mustLoad(t, "default", Options{})
	err := p.Apply(Overrides{Tmpfs: []string{"/x:lots"}, Env: []string{"A"}, Cwd: "rel"})
	if err == nil || strings.Count(err.Error(), "\n") != 2 {
		t.Errorf("Apply = %v, want three errors", err)
	}
	err = p.Apply(Flags{
		Overrides: Overrides{Binds: []string{"/"}, Hostname: "a b", LimitsMode: "soft", Seccomp: "nosuch"},
		Memory:    "lots", TimeLimit: "soon", CPU: "9999",
	}.Parse())
	var flags []string
	for line := range strings.SplitSeq(fmt.Sprint(err), "\n") {
		flags = append(flags, strings.Fields(line)[0])
	}
	want := []string{"--bind", "--hostname", "--time-limit", "--memory", "--cpu", "--limits-mode", "--seccomp"}
	if !reflect.DeepEqual(flags, want) {
		t.Errorf("Apply reported %q, want %q:\n%v", flags, want, err)
	}
}

// TestSplitPaths pins the escapes of a flag's paths: "\:" is a colon in a
// path, "\\" a backslash, and any other backslash is itself.
func TestSplitPaths(t *testing.T) {
	for in, want := range map[string][]string{
		"":            {""},
		"/a":          {"/a"},
		"/a:/b":       {"/a", "/b"},
		":":           {"", ""},
		`/a\:b`:       {"/a:b"},
		`/a\:b:/c\:d`: {"/a:b", "/c:d"},
		`/a\\:/b`:     {`/a\`, "/b"},
		`/a\\\:b`:     {`/a\:b`},
		`/a\b:/c`:     {`/a\b`, "/c"},
		`/a\`:         {`/a\`},
		"/a:b:c":      {"/a", "b", "c"},
		`\\\\`:        {`\\`},
	} {
		if got := splitPaths(in); !reflect.DeepEqual(got, want) {
			t.Errorf("splitPaths(%q) = %q, want %q", in, got, want)
		}
	}
}
