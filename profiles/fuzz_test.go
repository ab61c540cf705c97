package profiles

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary bytes through decoding, validation, merging and
// Encode, as a profile (seccomp/policyfile fuzzes policy files). Besides
// never panicking it checks that the decoder and the in-memory check agree,
// that every problem in a parsed file is located, and that whatever loads
// survives Encode and a second load unchanged.
func FuzzLoad(f *testing.F) {
	// Small seeds: the engine minimizes every new input, and minimizing one
	// grown from a 5 KB built-in takes longer than fuzzing.
	f.Add([]byte(fuzzSeed))
	wrong, _ := filepath.Glob("testdata/*.wrong")
	for _, w := range wrong {
		data, _ := os.ReadFile(w)
		f.Add(data)
	}
	f.Add([]byte(fuzzSeccompSeed))
	policies, _ := filepath.Glob("testdata/seccomp/*.toml")
	for _, p := range policies {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	for _, edge := range []string{
		"\ufeffhostname = \"a\"\r\ncwd = '/x'\r\n",
		`"env".set."A\u0042" = "x\u0000"` + "\n",
		`mount = [{type = "dir", dst = "/d", mode = 0o755}, {type = "dev", dst = "/dev"}]` + "\n",
		"x = " + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "\n",
		"[env.set]\n\"\" = \"\"\n'a.b' = '''\nmulti\n'''\n",
	} {
		f.Add([]byte(edge))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, probs := decode("fuzz.toml", data)
		if l == nil {
			return // not TOML: one syntax problem
		}
		l.Position("description") // located whether or not a problem needs it: it must never hang or panic
		for _, p := range probs {
			if p.Line == 0 {
				t.Errorf("problem not located: %v\n%q", p, data)
			}
		}
		if len(probs) > 0 {
			return
		}
		p, probs := finder{}.build([]*layer{l})
		for _, prob := range probs {
			if prob.File == "fuzz.toml" && prob.Line == 0 {
				t.Errorf("problem not located: %v\n%q", prob, data)
			}
		}
		if len(probs) > 0 {
			return // a policy not found, or without a default
		}
		if err := p.check(); err != nil {
			t.Fatalf("decoded without problems, but check says: %v\n%q", err, data)
		}
		enc, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		back := reload(t, enc, Options{})
		if !reflect.DeepEqual(back, p) {
			t.Fatalf("round trip changed the profile:\n%+v\n%+v\n%s", p, back, enc)
		}
		if again, _ := back.Encode(); string(again) != string(enc) {
			t.Fatalf("Encode is not stable:\n%s\n%s", enc, again)
		}
		_, _ = p.Config([]string{"true"}, []string{"HOME=/home/u"})
	})
}

// fuzzSeed uses every key once, compactly.
const fuzzSeed = `description = "d"
extends = "minimal"
hostname = "h"
cwd = "/w"
new_session = false
user = { uid = 1, gid = 2, name = "n", host_uid = 3, host_gid = 4 }
env = { keep = ["T"], set = { P = "/bin" } }
limits = { time = "1m", core = 0, nofile = 8, nproc = "unlimited", fsize = "1G", cpu_time = "9s", as = 1024, stack = "8M" }
network = { mode = "none" }
[[mount]]
type = "bind"
src = "~/s"
dst = "/s"
optional = true
[[mount]]
type = "tmpfs"
dst = "/t"
size = "1M"
mode = 0o1777
[[mount]]
type = "symlink"
dst = "/l"
target = "t"
[[mount]]
type = "file"
dst = "/f"
mode = "0644"
content = """x"""
[[mount]]
type = "workspace"
dst = "/x"
`

// fuzzSeccompSeed writes a policy inline in a profile, compactly.
const fuzzSeccompSeed = `seccomp = { audit = true, default = { errno = "ENOSYS" }, rule = [
  { syscalls = ["mount", "@mount"], action = "kill_process", comment = "c" },
  { syscalls = ["ioctl"], action = { errno = 1 }, arg = [{ index = 1, op = "masked_eq", value = 0x5412, mask = "0xffffffff" }] },
] }
`

// FuzzApply feeds arbitrary flag values to Apply: it must never panic, and a
// profile it accepts must still pass check and survive Encode.
func FuzzApply(f *testing.F) {
	f.Add("/x:1G:0755", "/a:/b", "A=b", "TERM", "/tmp", "h", "10m", "ws", "none", true)
	f.Add("x", "~/a", "=", "A=B", "rel", "a b", "-1s", "/", "default", false)
	f.Add("x", "~/a", "=", "A=B", "rel", "a b", "-1s", "/", "../x", false)
	f.Fuzz(func(t *testing.T, tmpfs, bind, env, keep, cwd, host, tl, ws, sc string, audit bool) {
		p := mustLoad(t, "default", Options{})
		err := p.Apply(Flags{Overrides: Overrides{
			Workspace: ws, Binds: []string{bind}, ROBinds: []string{bind}, Tmpfs: []string{tmpfs},
			Env: []string{env}, KeepEnv: []string{keep}, Cwd: cwd, Hostname: host,
			Seccomp: sc, SeccompAudit: audit, Cwd0: "/home/u",
		}, TimeLimit: tl}.Parse())
		if err != nil {
			return
		}
		if err := p.check(); err != nil {
			t.Fatalf("Apply accepted what check refuses: %v", err)
		}
		enc, _ := p.Encode()
		reload(t, enc, Options{})
	})
}
