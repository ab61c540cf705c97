package profiles

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testfiles"
)

func mustLoad(t *testing.T, ref string, opts Options) *Profile {
	t.Helper()
	p, err := Load(ref, opts)
	if err != nil {
		t.Fatalf("Load(%q): %v", ref, err)
	}
	p.Files = nil // TestLoadFiles checks them; elsewhere they are noise
	return p
}

func findMount(p *Profile, dst string) *Mount {
	for i := range p.Mounts {
		if p.Mounts[i].Dst == dst {
			return &p.Mounts[i]
		}
	}
	return nil
}

func TestBuiltins(t *testing.T) {
	for _, name := range builtinNames {
		t.Run(name, func(t *testing.T) {
			data, err := builtins.ReadFile(name + ".toml")
			if err != nil {
				t.Fatal(err)
			}
			if _, probs := decode(name, data); len(probs) > 0 {
				t.Fatalf("built-in has problems:\n%v", probs)
			}
			p := mustLoad(t, name, Options{})
			if p.Name != name || p.Description == "" {
				t.Errorf("Name %q, Description %q", p.Name, p.Description)
			}
			if p.Hostname != "jail" || !p.NewSession || p.Network.Mode != "none" {
				t.Errorf("hostname %q, new_session %v, network %q", p.Hostname, p.NewSession, p.Network.Mode)
			}
			if p.User != (User{UID: 1000, GID: 1000, Name: p.User.Name, HostUID: 65534, HostGID: 65534}) {
				t.Errorf("user = %+v", p.User)
			}
			if len(p.Env.Keep) != 0 {
				t.Errorf("env.keep = %q: no host variable may pass by default", p.Env.Keep)
			}
			if p.Limits.Time == 0 || p.Limits.Core == nil || *p.Limits.Core != 0 ||
				p.Limits.Nofile == nil || p.Limits.Fsize == nil {
				t.Errorf("limits = %+v: must be bounded by default", p.Limits)
			}
			tmp := findMount(p, "/tmp")
			if tmp == nil || tmp.Type != "tmpfs" || tmp.Size != 256<<20 || tmp.Mode != 0o1777 {
				t.Errorf("/tmp = %+v", tmp)
			}
			for _, dst := range []string{"/usr", "/proc", "/dev", "/lib64"} {
				if findMount(p, dst) == nil {
					t.Errorf("no mount at %s", dst)
				}
			}
		})
	}
}

// TestBuiltinsExposeNoSecrets checks invariant 2's policy side: the
// built-ins never show the host's accounts, keys or home directories, and
// nothing of the host is writable except an agent's workspace.
func TestBuiltinsExposeNoSecrets(t *testing.T) {
	forbidden := []string{
		"/etc/shadow", "/etc/gshadow", "/etc/passwd", "/etc/group", "/etc/sudoers",
		"/etc/sudoers.d", "/etc/ssh", "/etc/ssl/private", "/etc/pki/tls/private",
		"/root", "/home", "/etc/environment", "/etc/ld.so.preload", "/var/run", "/run",
	}
	for _, name := range builtinNames {
		p := mustLoad(t, name, Options{})
		for _, m := range p.Mounts {
			if m.Type == "bind" {
				t.Errorf("%s: %s is a writable host path", name, m.Dst)
			}
			if m.Src == "" {
				continue
			}
			for _, f := range forbidden {
				if m.Src == f || strings.HasPrefix(f, m.Src+"/") || strings.HasPrefix(m.Src, f+"/") {
					t.Errorf("%s: mounts %s, which exposes %s", name, m.Src, f)
				}
			}
		}
	}
}

func TestBuiltinLayering(t *testing.T) {
	minimal := mustLoad(t, "minimal", Options{})
	def := mustLoad(t, "default", Options{})
	agent := mustLoad(t, "agent", Options{})
	if minimal.User.Name != "" || findMount(minimal, "/etc/hosts") != nil {
		t.Errorf("minimal must have no /etc: name %q", minimal.User.Name)
	}
	if def.User.Name != "jail" || def.Cwd != "/" || def.Env.Set["HOME"] != "/tmp" {
		t.Errorf("default: name %q cwd %q HOME %q", def.User.Name, def.Cwd, def.Env.Set["HOME"])
	}
	if h := findMount(def, "/etc/hosts"); h == nil || h.Type != "file" || !strings.Contains(h.Content, "localhost") {
		t.Errorf("default /etc/hosts = %+v", h)
	}
	// default extends minimal: minimal's mounts come first, in order.
	if !reflect.DeepEqual(def.Mounts[:len(minimal.Mounts)], minimal.Mounts) {
		t.Error("default does not start with minimal's mounts")
	}
	if agent.Cwd != "/workspace" || agent.Env.Set["HOME"] != "/workspace" || agent.Env.Set["PATH"] == "" {
		t.Errorf("agent: cwd %q env %v", agent.Cwd, agent.Env.Set)
	}
	ws := agent.Mounts[len(agent.Mounts)-1]
	if ws != (Mount{Type: "workspace", Dst: "/workspace"}) {
		t.Errorf("agent's last mount = %+v", ws)
	}
}

func TestSearchPath(t *testing.T) {
	first := testfiles.Write(t, map[string]string{
		"mine.toml":    "description = \"first\"\nhostname = \"first\"\n",
		"default.toml": "description = \"my default\"\nextends = \"default\"\nhostname = \"mine\"\n",
		"sub/rel.toml": "extends = \"../mine.toml\"\n",
		"chained.toml": "extends = \"sub/rel.toml\"\ncwd = \"/tmp\"\n",
		"broken.toml":  "hostname = \n",
	})
	second := testfiles.Write(t, map[string]string{
		"mine.toml":  "description = \"second\"\n",
		"other.toml": "description = \"other\"\nextends = \"mine\"\n",
	})
	opts := Options{SearchPath: []string{first, second, filepath.Join(first, "missing")}}

	if p := mustLoad(t, "mine", opts); p.Description != "first" {
		t.Errorf("mine: the first directory must win, got %q", p.Description)
	}
	// A built-in's name is the built-in's: a file of that name in the
	// search path does not replace it.
	p := mustLoad(t, "default", opts)
	if p.Hostname != "jail" || p.Description != mustLoad(t, "default", Options{}).Description {
		t.Errorf("default.toml in the search path replaced the built-in: %+v", p)
	}
	if p := mustLoad(t, "other", opts); p.Hostname != "first" || p.Description != "other" {
		t.Errorf("other extends mine by name: hostname %q", p.Hostname)
	}
	// Relative extends start from the extending file's directory.
	p = mustLoad(t, filepath.Join(first, "chained.toml"), opts)
	if p.Hostname != "first" || p.Cwd != "/tmp" {
		t.Errorf("chained: hostname %q cwd %q", p.Hostname, p.Cwd)
	}
	// Without the search path, the built-in is found.
	if p := mustLoad(t, "default", Options{}); p.Hostname != "jail" {
		t.Errorf("built-in default: hostname %q", p.Hostname)
	}

	_, err := Load("nosuch", opts)
	if err == nil || !strings.Contains(err.Error(), `no profile "nosuch"`) ||
		!strings.Contains(err.Error(), "profiles: agent, broken, chained, container, default, mine, minimal, other") {
		t.Errorf("Load(nosuch) = %v; want the list of profiles", err)
	}
	var probs Errors
	if _, err := Load("broken", opts); !errors.As(err, &probs) || probs[0].File != filepath.Join(first, "broken.toml") {
		t.Errorf("Load(broken) = %v", err)
	}
	for _, bad := range []string{"", "..", "-x", "a b"} {
		if _, err := Load(bad, opts); err == nil || !strings.Contains(err.Error(), "not a profile name") {
			t.Errorf("Load(%q) = %v", bad, err)
		}
	}
	if _, err := Load(filepath.Join(first, "nope.toml"), opts); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing file) = %v", err)
	}

	entries, err := List(opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name+"|"+e.Source+"|"+e.Description)
	}
	want := []string{
		"agent|built-in|" + mustLoad(t, "agent", Options{}).Description,
		"broken|" + filepath.Join(first, "broken.toml") + `|does not load: ` + filepath.Join(first, "broken.toml") + `:1:12: expected value but found '\n' instead`,
		"chained|" + filepath.Join(first, "chained.toml") + "|first",
		"container|built-in|" + mustLoad(t, "container", Options{}).Description,
		"default|built-in|" + mustLoad(t, "default", Options{}).Description,
		"mine|" + filepath.Join(first, "mine.toml") + "|first",
		"minimal|built-in|" + mustLoad(t, "minimal", Options{}).Description,
		"other|" + filepath.Join(second, "other.toml") + "|other",
	}
	if !slices.Equal(got, want) {
		t.Errorf("List:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestProfileOwnership(t *testing.T) {
	dir := testfiles.Write(t, map[string]string{"open.toml": "hostname = \"x\"\n", "theirs.toml": "hostname = \"x\"\n"})
	if err := os.Chmod(filepath.Join(dir, "open.toml"), 0o666); err != nil {
		t.Fatal(err)
	}
	opts := Options{SearchPath: []string{dir}}
	if _, err := Load("open", opts); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("Load(open) = %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file away")
	}
	if err := os.Chown(filepath.Join(dir, "theirs.toml"), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Load("theirs", opts); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Errorf("Load(theirs) = %v", err)
	}
}

func TestExtendsDepth(t *testing.T) {
	files := map[string]string{"p0.toml": "hostname = \"deep\"\n"}
	for i := 1; i <= 9; i++ {
		files["p"+string(rune('0'+i))+".toml"] = "extends = \"p" + string(rune('0'+i-1)) + "\"\n"
	}
	opts := Options{SearchPath: []string{testfiles.Write(t, files)}}
	// p8 extends 8 times: allowed.
	if p := mustLoad(t, "p8", opts); p.Hostname != "deep" {
		t.Errorf("p8: hostname %q", p.Hostname)
	}
	_, err := Load("p9", opts)
	if err == nil || !strings.Contains(err.Error(), "p1.toml:1:1: extends: more than 8 profiles extend one another") {
		t.Errorf("Load(p9) = %v", err)
	}
}

func TestDefaultSearchPath(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want []string
	}{
		{nil, []string{"/etc/jail/profiles"}},
		{[]string{"HOME=/home/u"}, []string{"/home/u/.config/jail/profiles", "/etc/jail/profiles"}},
		{
			[]string{"JAIL_PROFILE_PATH=/a::relative:/b/", "HOME=/home/u", "HOME=/home/v"},
			[]string{"/a", "/b", "/home/v/.config/jail/profiles", "/etc/jail/profiles"},
		},
		{[]string{"HOME=", "HOME_X=/x"}, []string{"/etc/jail/profiles"}},
	} {
		if got := DefaultSearchPath(tc.env); !slices.Equal(got, tc.want) {
			t.Errorf("DefaultSearchPath(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

// BenchmarkAgent measures what every `jail -p agent` pays before the jail
// starts: loading the built-in chain, applying --workspace, building Config.
func BenchmarkAgent(b *testing.B) {
	for b.Loop() {
		p, err := Load("agent", Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Apply(Overrides{Workspace: "/w"}); err != nil {
			b.Fatal(err)
		}
		if _, err := p.Config([]string{"true"}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLoadFiles checks that a profile lists what it depends on: the files
// read, and where a name was looked for and not found.
func TestLoadFiles(t *testing.T) {
	first := testfiles.Write(t, map[string]string{})
	second := testfiles.Write(t, map[string]string{"team.toml": "extends = \"default\"\n"})
	p, err := Load("team", Options{SearchPath: []string{first, second}})
	if err != nil {
		t.Fatal(err)
	}
	if fi, ok := p.Files[filepath.Join(first, "team.toml")]; !ok || fi != nil {
		t.Errorf("the missing candidate in %s is not noted as absent: %v", first, p.Files)
	}
	if fi := p.Files[filepath.Join(second, "team.toml")]; fi == nil || !fi.Mode().IsRegular() {
		t.Errorf("the file read is not noted: %v", p.Files)
	}
	if len(p.Files) != 2 {
		t.Errorf("Files = %v; want just those two (built-ins are no files)", p.Files)
	}
}
