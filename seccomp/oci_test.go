package seccomp_test

import (
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/seccomp"
)

// call is one syscall with its arguments, for decide.
type call struct {
	name string
	args [6]uint64
}

func c(name string, args ...uint64) call {
	var a [6]uint64
	copy(a[:], args)
	return call{name, a}
}

// model is a policy as the policy language defines it, indexed for
// decide: each syscall's rules, groups expanded, in order.
type model struct {
	dflt  seccomp.Action
	rules map[string][]seccomp.Rule
}

func newModel(p *seccomp.Policy) *model {
	m := &model{dflt: p.Default, rules: map[string][]seccomp.Rule{}}
	for _, r := range p.Rules {
		for _, n := range expand(r.Names) {
			m.rules[n] = append(m.rules[n], r)
		}
	}
	return m
}

// decide is what the policy does with a call: the last rule for the
// syscall whose conditions all hold wins; no rule, the default.
func (m *model) decide(cl call) seccomp.Action {
	act := m.dflt
	for _, r := range m.rules[cl.name] {
		if holds(r.Conds, cl.args) {
			act = r.Action
		}
	}
	return act
}

// expand resolves groups to syscall names; the groups test rules out cycles.
func expand(names []string) []string {
	var out []string
	for _, n := range names {
		if g, ok := seccomp.Groups[n]; ok {
			out = append(out, expand(g.Syscalls)...)
		} else {
			out = append(out, n)
		}
	}
	return out
}

// holds compares as libseccomp does: unsigned 64-bit.
func holds(conds []seccomp.Cond, args [6]uint64) bool {
	for _, c := range conds {
		a := args[c.Index]
		var ok bool
		switch c.Op {
		case seccomp.Eq:
			ok = a == c.Value
		case seccomp.Ne:
			ok = a != c.Value
		case seccomp.Lt:
			ok = a < c.Value
		case seccomp.Le:
			ok = a <= c.Value
		case seccomp.Gt:
			ok = a > c.Value
		case seccomp.Ge:
			ok = a >= c.Value
		case seccomp.MaskedEq:
			ok = a&c.Mask == c.Value
		}
		if !ok {
			return false
		}
	}
	return true
}

var (
	allow  = seccomp.Action{Kind: seccomp.Allow}
	eperm  = seccomp.Action{Kind: seccomp.Errno, Errno: int(unix.EPERM)}
	enosys = seccomp.Action{Kind: seccomp.Errno, Errno: int(unix.ENOSYS)}
)

// Clone flags and other numbers the tests use.
const (
	cloneNewUser = 0x10000000
	cloneNewNS   = 0x00020000
	cloneThread  = 0x003d0f00 // glibc's pthread_create: VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID|CHILD_CLEARTID
	sigchld      = 17
	afALG        = 38
	afVSOCK      = 40
	tiocsti      = 0x5412
	tioclinux    = 0x541c
)

func importDocker(t *testing.T, arch string) (*seccomp.Policy, []string) {
	t.Helper()
	data, err := os.ReadFile("testdata/docker-default.json")
	if err != nil {
		t.Fatal(err)
	}
	p, warnings, err := seccomp.ImportOCI(data, arch)
	if err != nil {
		t.Fatalf("import Docker's default profile for %s: %v", arch, err)
	}
	return p, warnings
}

// Docker's own profile, imported, does what Docker does to a container
// without capabilities, on any kernel jail runs on (5.12 or newer, so
// past the profile's minKernel 4.8 for ptrace).
func TestImportDockerDefault(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64"} {
		p, warnings := importDocker(t, arch)
		m := newModel(p)
		if p.Default != eperm {
			t.Errorf("%s: default %v, want %v", arch, p.Default, eperm)
		}
		for _, tc := range []struct {
			call call
			want seccomp.Action
		}{
			{c("read"), allow},
			{c("write"), allow},
			{c("execve"), allow},
			{c("mount"), eperm},
			{c("umount2"), eperm},
			{c("unshare", cloneNewUser), eperm},
			{c("setns"), eperm},
			{c("keyctl"), eperm},
			{c("add_key"), eperm},
			{c("reboot"), eperm},
			{c("bpf"), eperm},
			{c("io_uring_setup"), eperm},
			{c("open_by_handle_at"), eperm},
			{c("ptrace"), allow}, // includes.minKernel 4.8
			{c("process_vm_readv"), allow},
			{c("kcmp"), eperm}, // CAP_SYS_PTRACE only
			{c("clone", sigchld), allow},
			{c("clone", cloneThread), allow},
			{c("clone", cloneNewUser|sigchld), eperm},
			{c("clone", cloneNewNS|sigchld), eperm},
			{c("clone3"), enosys},
			{c("personality", 0), allow},
			{c("personality", 8), allow},
			{c("personality", 0xffffffff), allow},
			{c("personality", 1), eperm},
			{c("personality", 0x0040000), eperm}, // ADDR_NO_RANDOMIZE
			{c("socket", 2), allow},
			{c("socket", afALG), eperm},
			{c("socket", 39), allow},
			{c("socket", afVSOCK), eperm},
			{c("socket", 41), allow},
		} {
			if got := m.decide(tc.call); got != tc.want {
				t.Errorf("%s: %s%v: %v, want %v", arch, tc.call.name, tc.call.args[:2], got, tc.want)
			}
		}
		// arch_prctl is x86's: the entry that allows it names amd64 and x32.
		want := map[string]seccomp.Action{"amd64": allow, "arm64": eperm}[arch]
		if got := m.decide(c("arch_prctl")); got != want {
			t.Errorf("%s: arch_prctl: %v, want %v", arch, got, want)
		}
		// Names newer than this libseccomp are skipped, with a warning each.
		if !seccomp.Known("mseal") && !containsWarning(warnings, `unknown syscall "mseal"`) {
			t.Errorf("%s: no warning for mseal in %q", arch, warnings)
		}
		if !containsWarning(warnings, "foreign ABI") {
			t.Errorf("%s: no warning that the profile's sub-architectures are killed: %q", arch, warnings)
		}
		if arch == runtime.GOARCH {
			if _, err := seccomp.Compile(p, seccomp.Mode{}); err != nil {
				t.Errorf("%s: the imported profile does not compile: %v", arch, err)
			}
		}
	}
}

func containsWarning(warnings []string, s string) bool {
	return slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, s) })
}

// Small profiles, each for one rule of the translation.
func TestImportOCI(t *testing.T) {
	kill := seccomp.Action{Kind: seccomp.KillProcess}
	for _, tc := range []struct {
		name    string
		json    string
		arch    string // amd64 unless set
		want    []seccomp.Rule
		dflt    *seccomp.Action // EPERM unless set
		warning string          // a warning that must be among them
	}{
		{
			name: "names and name",
			json: `{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[
				{"names":["read","write"],"action":"SCMP_ACT_ALLOW"},
				{"name":"mount","action":"SCMP_ACT_ERRNO","errnoRet":38}]}`,
			want: []seccomp.Rule{
				{Names: []string{"read", "write"}, Action: allow, Comment: "OCI syscalls[0]"},
				{Names: []string{"mount"}, Action: enosys, Comment: "OCI syscalls[1]"},
			},
		},
		{
			name: "default errno and kill",
			json: `{"defaultAction":"SCMP_ACT_KILL_PROCESS","syscalls":[
				{"names":["ptrace"],"action":"SCMP_ACT_KILL","comment":"no tracing"},
				{"names":["kcmp"],"action":"SCMP_ACT_KILL_THREAD"},
				{"names":["bpf"],"action":"SCMP_ACT_TRAP"},
				{"names":["chroot"],"action":"SCMP_ACT_LOG"},
				{"names":["keyctl"],"action":"SCMP_ACT_NOTIFY"},
				{"names":["acct"],"action":"SCMP_ACT_ERRNO"}]}`,
			dflt: &kill,
			want: []seccomp.Rule{
				{Names: []string{"ptrace"}, Action: seccomp.Action{Kind: seccomp.KillThread}, Comment: "OCI syscalls[0]: no tracing"},
				{Names: []string{"kcmp"}, Action: seccomp.Action{Kind: seccomp.KillThread}, Comment: "OCI syscalls[1]"},
				{Names: []string{"bpf"}, Action: seccomp.Action{Kind: seccomp.Trap}, Comment: "OCI syscalls[2]"},
				{Names: []string{"chroot"}, Action: seccomp.Action{Kind: seccomp.Log}, Comment: "OCI syscalls[3]"},
				{Names: []string{"keyctl"}, Action: seccomp.Action{Kind: seccomp.Notify}, Comment: "OCI syscalls[4]"},
				{Names: []string{"acct"}, Action: eperm, Comment: "OCI syscalls[5]"},
			},
		},
		{
			name: "trace has no tracer",
			json: `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[
				{"names":["mount"],"action":"SCMP_ACT_TRACE","errnoRet":7}]}`,
			dflt:    &allow,
			want:    []seccomp.Rule{{Names: []string{"mount"}, Action: enosys, Comment: "OCI syscalls[0]"}},
			warning: "no tracer",
		},
		{
			name: "masked_eq takes value as the mask, valueTwo as the value",
			json: `{"defaultAction":"SCMP_ACT_ERRNO","defaultErrnoRet":1,"syscalls":[
				{"names":["clone"],"action":"SCMP_ACT_ALLOW","args":[
					{"index":0,"value":2114060288,"valueTwo":0,"op":"SCMP_CMP_MASKED_EQ"}]},
				{"names":["ioctl"],"action":"SCMP_ACT_ERRNO","args":[
					{"index":1,"value":4294967295,"valueTwo":21522,"op":"SCMP_CMP_MASKED_EQ"},
					{"index":0,"value":3,"op":"SCMP_CMP_GE"}]}]}`,
			want: []seccomp.Rule{
				{Names: []string{"clone"}, Action: allow, Comment: "OCI syscalls[0]",
					Conds: []seccomp.Cond{{Index: 0, Op: seccomp.MaskedEq, Mask: 0x7e020000, Value: 0}}},
				{Names: []string{"ioctl"}, Action: eperm, Comment: "OCI syscalls[1]",
					Conds: []seccomp.Cond{{Index: 1, Op: seccomp.MaskedEq, Mask: 0xffffffff, Value: tiocsti}, {Index: 0, Op: seccomp.Ge, Value: 3}}},
			},
		},
		{
			name: "two conditions on one argument: a rule each, as runc",
			json: `{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[
				{"names":["personality"],"action":"SCMP_ACT_ALLOW","args":[
					{"index":0,"value":0,"op":"SCMP_CMP_EQ"},
					{"index":0,"value":8,"op":"SCMP_CMP_EQ"}]}]}`,
			want: []seccomp.Rule{
				{Names: []string{"personality"}, Action: allow, Comment: "OCI syscalls[0]", Conds: []seccomp.Cond{{Index: 0, Op: seccomp.Eq, Value: 0}}},
				{Names: []string{"personality"}, Action: allow, Comment: "OCI syscalls[0]", Conds: []seccomp.Cond{{Index: 0, Op: seccomp.Eq, Value: 8}}},
			},
			warning: "one rule each",
		},
		{
			name: "capabilities: the jail has none",
			json: `{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[
				{"names":["mount"],"action":"SCMP_ACT_ALLOW","includes":{"caps":["CAP_SYS_ADMIN"]}},
				{"names":["clone3"],"action":"SCMP_ACT_ERRNO","errnoRet":38,"excludes":{"caps":["CAP_SYS_ADMIN"]}}]}`,
			want: []seccomp.Rule{{Names: []string{"clone3"}, Action: enosys, Comment: "OCI syscalls[1]"}},
		},
		{
			name: "arches on amd64",
			json: archesJSON,
			want: []seccomp.Rule{
				{Names: []string{"arch_prctl"}, Action: allow, Comment: "OCI syscalls[0]"},
				{Names: []string{"modify_ldt"}, Action: allow, Comment: "OCI syscalls[2]"},
				{Names: []string{"pread64"}, Action: allow, Comment: "OCI syscalls[4]"},
			},
		},
		{
			name: "arches on arm64",
			json: archesJSON,
			arch: "arm64",
			want: []seccomp.Rule{
				{Names: []string{"sync_file_range"}, Action: allow, Comment: "OCI syscalls[1]"},
				{Names: []string{"pread64"}, Action: allow, Comment: "OCI syscalls[4]"},
			},
		},
		{
			name: "minKernel against the running kernel",
			json: `{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[
				{"names":["ptrace"],"action":"SCMP_ACT_ALLOW","includes":{"minKernel":"4.8"}},
				{"names":["kcmp"],"action":"SCMP_ACT_ALLOW","includes":{"minKernel":"99.0"}},
				{"names":["getpid"],"action":"SCMP_ACT_ALLOW","excludes":{"minKernel":"99.0"}},
				{"names":["getppid"],"action":"SCMP_ACT_ALLOW","excludes":{"minKernel":"3.10"}}]}`,
			want: []seccomp.Rule{
				{Names: []string{"ptrace"}, Action: allow, Comment: "OCI syscalls[0]"},
				{Names: []string{"getpid"}, Action: allow, Comment: "OCI syscalls[2]"},
			},
		},
		{
			name: "unknown names are skipped",
			json: `{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[
				{"names":["read","no_such_call"],"action":"SCMP_ACT_ALLOW"},
				{"names":["another_one"],"action":"SCMP_ACT_ALLOW"},
				{"names":["@mount"],"action":"SCMP_ACT_ALLOW"}]}`,
			want:    []seccomp.Rule{{Names: []string{"read"}, Action: allow, Comment: "OCI syscalls[0]"}},
			warning: `syscalls[1]: unknown syscall "another_one": skipped`,
		},
		{
			name: "a conflict: the later entry wins",
			json: `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[
				{"names":["mount"],"action":"SCMP_ACT_ERRNO"},
				{"names":["mount"],"action":"SCMP_ACT_KILL_PROCESS"}]}`,
			dflt: &allow,
			want: []seccomp.Rule{
				{Names: []string{"mount"}, Action: eperm, Comment: "OCI syscalls[0]"},
				{Names: []string{"mount"}, Action: kill, Comment: "OCI syscalls[1]"},
			},
			warning: "the later entry wins",
		},
		{
			name:    "a profile for another architecture",
			json:    `{"defaultAction":"SCMP_ACT_ERRNO","architectures":["SCMP_ARCH_PPC64LE"],"syscalls":[]}`,
			warning: "not SCMP_ARCH_X86_64",
		},
		{
			name:    "a listener is not jail's",
			json:    `{"defaultAction":"SCMP_ACT_ERRNO","listenerPath":"/run/agent.sock","flags":["SECCOMP_FILTER_FLAG_LOG"]}`,
			warning: "listenerPath: ignored",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arch := tc.arch
			if arch == "" {
				arch = "amd64"
			}
			p, warnings, err := seccomp.ImportOCI([]byte(tc.json), arch)
			if err != nil {
				t.Fatal(err)
			}
			dflt := eperm
			if tc.dflt != nil {
				dflt = *tc.dflt
			}
			if p.Default != dflt {
				t.Errorf("default %v, want %v", p.Default, dflt)
			}
			if !rulesEqual(p.Rules, tc.want) {
				t.Errorf("rules\n%+v\nwant\n%+v", p.Rules, tc.want)
			}
			if tc.warning != "" && !containsWarning(warnings, tc.warning) {
				t.Errorf("warnings %q: none says %q", warnings, tc.warning)
			}
		})
	}
}

// archesJSON has rules for one architecture or another, in Docker's names
// and libseccomp's.
const archesJSON = `{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[
	{"names":["arch_prctl"],"action":"SCMP_ACT_ALLOW","includes":{"arches":["amd64","x32"]}},
	{"names":["sync_file_range"],"action":"SCMP_ACT_ALLOW","includes":{"arches":["SCMP_ARCH_AARCH64"]}},
	{"names":["modify_ldt"],"action":"SCMP_ACT_ALLOW","excludes":{"arches":["arm64"]}},
	{"names":["vm86"],"action":"SCMP_ACT_ALLOW","includes":{"arches":["x86"]}},
	{"names":["pread64"],"action":"SCMP_ACT_ALLOW","excludes":{"arches":["s390x"]}}]}`

func rulesEqual(a, b []seccomp.Rule) bool {
	return slices.EqualFunc(a, b, func(x, y seccomp.Rule) bool {
		return slices.Equal(x.Names, y.Names) && x.Action == y.Action &&
			slices.Equal(x.Conds, y.Conds) && x.Comment == y.Comment
	})
}

// Malformed input is an error, naming what is wrong, never a guess.
func TestImportOCIRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, json, arch, want string
	}{
		{"not JSON", `{"defaultAction":`, "amd64", "unexpected EOF"},
		{"trailing data", `{"defaultAction":"SCMP_ACT_ALLOW"} {}`, "amd64", "data after"},
		{"unknown key", `{"defaultAction":"SCMP_ACT_ALLOW","defaultActon":"x"}`, "amd64", "unknown field"},
		{"unknown key in an entry", `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["read"],"action":"SCMP_ACT_ERRNO","errno":1}]}`, "amd64", "unknown field"},
		{"no default", `{"syscalls":[]}`, "amd64", "defaultAction: required"},
		{"unknown default", `{"defaultAction":"SCMP_ACT_MAYBE"}`, "amd64", `unknown action "SCMP_ACT_MAYBE"`},
		{"unknown action", `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["read"],"action":"ALLOW"}]}`, "amd64", `syscalls[0]: action: unknown action "ALLOW"`},
		{"errno 0", `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["read"],"action":"SCMP_ACT_ERRNO","errnoRet":0}]}`, "amd64", "errno 0"},
		{"errno too big", `{"defaultAction":"SCMP_ACT_ERRNO","defaultErrnoRet":5000}`, "amd64", "errno 5000"},
		{"errno with allow", `{"defaultAction":"SCMP_ACT_ALLOW","defaultErrnoRet":1}`, "amd64", "only with SCMP_ACT_ERRNO"},
		{"name and names", `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"name":"read","names":["write"],"action":"SCMP_ACT_ERRNO"}]}`, "amd64", "both name and names"},
		{"no names", `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"action":"SCMP_ACT_ERRNO"}]}`, "amd64", "no syscall named"},
		{"index 6", `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["read"],"action":"SCMP_ACT_ERRNO","args":[{"index":6,"value":1,"op":"SCMP_CMP_EQ"}]}]}`, "amd64", "syscalls[0]: args[0]: index 6"},
		{"negative index", `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["read"],"action":"SCMP_ACT_ERRNO","args":[{"index":-1,"value":1,"op":"SCMP_CMP_EQ"}]}]}`, "amd64", "cannot unmarshal"},
		{"unknown op", `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["read"],"action":"SCMP_ACT_ERRNO","args":[{"index":0,"value":1,"op":"SCMP_CMP_BETWEEN"}]}]}`, "amd64", `op "SCMP_CMP_BETWEEN"`},
		{"bad minKernel", `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["read"],"action":"SCMP_ACT_ERRNO","includes":{"minKernel":"4.8.1"}}]}`, "amd64", `kernel version "4.8.1"`},
		{"minKernel 0.0", `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["read"],"action":"SCMP_ACT_ERRNO","excludes":{"minKernel":"0.0"}}]}`, "amd64", `kernel version "0.0"`},
		{"architectures and archMap", `{"defaultAction":"SCMP_ACT_ALLOW","architectures":["SCMP_ARCH_X86_64"],"archMap":[{"architecture":"SCMP_ARCH_X86_64"}]}`, "amd64", "both architectures and archMap"},
		{"unsupported architecture", `{"defaultAction":"SCMP_ACT_ALLOW"}`, "riscv64", `architecture "riscv64"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := seccomp.ImportOCI([]byte(tc.json), tc.arch)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// The built-in default policy denies at least what Docker's default profile
// denies to a container without capabilities: for every syscall of this
// architecture, with arguments at and around every value either compares.
func TestDefaultDeniesWhatDockerDenies(t *testing.T) {
	arch := nativeArch(t)
	docker, _ := importDocker(t, arch)
	dflt := loadPolicy(t, "default")
	dm, jm := newModel(docker), newModel(dflt)
	for _, name := range nativeSyscalls(t) {
		for _, args := range argSamples(name, docker, dflt) {
			if name == "personality" && args[0] > 0xffffffff {
				// The kernel reads the persona as an unsigned int: Docker's
				// 64-bit compare refuses high bits the call never sees.
				continue
			}
			cl := call{name, args}
			d, j := dm.decide(cl), jm.decide(cl)
			if d.Kind != seccomp.Allow && j.Kind == seccomp.Allow {
				t.Errorf("%s%v: Docker: %v, jail's default: %v", name, args, d, j)
			}
		}
	}
}

func nativeArch(t *testing.T) string {
	t.Helper()
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skipf("jail runs on amd64 and arm64, not %s", runtime.GOARCH)
	}
	return runtime.GOARCH
}
