package seccomp_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/seccomp"
	"github.com/jail-sandbox/jail/seccomp/policyfile"
)

// The groups the policies and their documentation rely on.
var wantGroups = []string{
	"@accounting", "@bpf", "@clock", "@cpu-emulation", "@debug", "@handles",
	"@io-uring", "@keyring", "@mempolicy", "@module", "@mount", "@namespaces",
	"@obsolete", "@privileged", "@raw-io", "@reboot", "@swap", "@syslog",
	"@userfaultfd",
}

func TestGroups(t *testing.T) {
	for _, g := range wantGroups {
		if _, ok := seccomp.Groups[g]; !ok {
			t.Errorf("group %s missing", g)
		}
	}
	for name, g := range seccomp.Groups {
		if !strings.HasPrefix(name, "@") {
			t.Errorf("group %q: a group's name starts with @", name)
		}
		if strings.TrimSpace(g.Doc) == "" {
			t.Errorf("%s: no Doc", name)
		}
		if len(g.Syscalls) == 0 {
			t.Errorf("%s: empty", name)
		}
		seen := map[string]bool{}
		for _, s := range g.Syscalls {
			if seen[s] {
				t.Errorf("%s: %s twice", name, s)
			}
			seen[s] = true
			if err := seccomp.CheckName(s); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

// A group that includes itself, directly or not, would never finish
// expanding.
func TestGroupsHaveNoCycles(t *testing.T) {
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var visit func(name string, path []string)
	visit = func(name string, path []string) {
		switch state[name] {
		case visiting:
			t.Errorf("cycle: %s", strings.Join(append(path, name), " -> "))
			return
		case done:
			return
		}
		state[name] = visiting
		for _, s := range seccomp.Groups[name].Syscalls {
			if strings.HasPrefix(s, "@") {
				visit(s, append(path, name))
			}
		}
		state[name] = done
	}
	for name := range seccomp.Groups {
		visit(name, nil)
	}
}

// Every group means something on an architecture jail runs on.
func TestGroupsReachJailsArchitectures(t *testing.T) {
	for name, g := range seccomp.Groups {
		found := false
		for _, s := range expand(g.Syscalls) {
			for _, arch := range []libseccomp.ScmpArch{libseccomp.ArchAMD64, libseccomp.ArchARM64} {
				if nr, err := libseccomp.GetSyscallFromNameByArch(s, arch); err == nil && nr >= 0 {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s: none of its syscalls exists on x86_64 or aarch64", name)
		}
	}
}

var builtinPolicies = []string{"default", "strict"}

// loadPolicy reads seccomp/policyfile/builtin/NAME.toml with the policy
// file loader. The binary's built-ins are decoded at build time (a
// policyfile test keeps them equal to the files), so the file goes in
// through a search directory, under another name: these tests read what is
// written.
func loadPolicy(t *testing.T, name string) *seccomp.Policy {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("policyfile", "builtin", name+".toml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "seccomp"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "seccomp", "file-"+name+".toml"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := policyfile.Load("file-"+name, policyfile.Options{SearchPath: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The built-in policies are valid, say why for every rule, and compile.
func TestBuiltinPolicies(t *testing.T) {
	for _, name := range builtinPolicies {
		p := loadPolicy(t, name)
		if errs := p.Check(); len(errs) > 0 {
			t.Errorf("%s: %v", name, errs)
		}
		for i, r := range p.Rules {
			if strings.TrimSpace(r.Comment) == "" {
				t.Errorf("%s: rule[%d] %v: no comment", name, i+1, r.Names)
			}
		}
		if _, err := seccomp.Compile(p, seccomp.Mode{}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// libseccomp compiles a rule differently from what the policy language says
// in three cases, so the built-in policies avoid all three: two compares of
// one argument in a rule (refused), an unconditional and a conditional rule
// for one syscall with different actions (the unconditional one is kept,
// whatever the order), and a rule with the default's action after one
// without (dropped, so it cannot cut a hole in the earlier rule).
func TestBuiltinPoliciesCompileAsWritten(t *testing.T) {
	for _, name := range builtinPolicies {
		for _, problem := range compileProblems(loadPolicy(t, name)) {
			t.Errorf("%s: %s", name, problem)
		}
	}
}

func compileProblems(p *seccomp.Policy) []string {
	var problems []string
	type placed struct {
		rule  int // 1-based, as Check counts
		conds string
		act   seccomp.Action
	}
	per := map[string][]placed{}
	for i, r := range p.Rules {
		args := map[uint]bool{}
		for _, c := range r.Conds {
			if args[c.Index] {
				problems = append(problems, fmt.Sprintf("rule[%d]: two compares of argument %d", i+1, c.Index))
			}
			args[c.Index] = true
		}
		conds := fmt.Sprint(r.Conds)
		for _, n := range expand(r.Names) {
			rs := per[n]
			// The same syscall and conditions: the later rule replaces the
			// earlier, in its place (the compiler does this).
			if j := slices.IndexFunc(rs, func(x placed) bool { return x.conds == conds }); j >= 0 {
				rs[j] = placed{i + 1, conds, r.Action}
			} else {
				rs = append(rs, placed{i + 1, conds, r.Action})
			}
			per[n] = rs
		}
	}
	for n, rs := range per {
		for j, r := range rs {
			if r.conds == "[]" {
				for _, o := range rs {
					if o.act != r.act {
						problems = append(problems, fmt.Sprintf("%s: rule[%d] has no conditions, rule[%d] another action", n, r.rule, o.rule))
					}
				}
			}
			if r.act == p.Default {
				for _, o := range rs[:j] {
					if o.act != p.Default {
						problems = append(problems, fmt.Sprintf("%s: rule[%d] has the default's action after rule[%d]", n, r.rule, o.rule))
					}
				}
			}
		}
	}
	sort.Strings(problems)
	return problems
}

var (
	eafnosupport = seccomp.Action{Kind: seccomp.Errno, Errno: int(unix.EAFNOSUPPORT)}
	enotsup      = seccomp.Action{Kind: seccomp.Errno, Errno: int(unix.ENOTSUP)}
)

type policyCase struct {
	call call
	want seccomp.Action
}

func checkCases(t *testing.T, policy string, cases []policyCase) {
	t.Helper()
	m := newModel(loadPolicy(t, policy))
	for _, tc := range cases {
		if got := m.decide(tc.call); got != tc.want {
			t.Errorf("%s: %s(%#x): %v, want %v", policy, tc.call.name, tc.call.args, got, tc.want)
		}
	}
}

// What the default policy must deny, and what ordinary programs need.
func TestDefaultPolicy(t *testing.T) {
	cases := []policyCase{
		{c("read"), allow},
		{c("write"), allow},
		{c("execve"), allow},
		{c("openat", 0, 0, unix.O_CREAT|unix.O_WRONLY, 0o644), allow},
		{c("mknodat", 0, 0, unix.S_IFIFO|0o644), allow}, // mkfifo
		{c("clone", sigchld), allow},
		{c("clone", cloneThread), allow},
		{c("clone", unix.CLONE_VM|unix.CLONE_VFORK|sigchld), allow},
		{c("clone3"), enosys},
		{c("openat2"), enosys},
		{c("adjtimex"), allow}, // reads with modes 0; the kernel refuses writes
		{c("clock_adjtime"), allow},
		{c("socket", unix.AF_INET), allow},
		{c("socket", unix.AF_UNIX), allow},
		{c("socket", unix.AF_NETLINK), allow},
		{c("socket", afALG), eafnosupport},
		{c("socket", 1<<32|afALG), eafnosupport}, // the kernel reads 32 bits
		{c("socket", afVSOCK), eafnosupport},
		{c("name_to_handle_at"), enotsup},
		{c("ioctl", 0, unix.TCGETS), allow},
		{c("ioctl", 0, tiocsti), eperm},
		{c("ioctl", 0, 1<<32|tiocsti), eperm},
		{c("ioctl", 0, tioclinux), eperm},
		{c("personality", 0), allow},
		{c("personality", 0xffffffff), allow},
		{c("personality", 0x0040000), eperm}, // ADDR_NO_RANDOMIZE,
	}
	for _, flag := range []uint64{
		unix.CLONE_NEWTIME, unix.CLONE_NEWNS, unix.CLONE_NEWCGROUP, unix.CLONE_NEWUTS,
		unix.CLONE_NEWIPC, unix.CLONE_NEWUSER, unix.CLONE_NEWPID, unix.CLONE_NEWNET,
	} {
		cases = append(cases, policyCase{c("clone", flag|sigchld), eperm})
		cases = append(cases, policyCase{c("clone", flag|cloneThread), eperm})
	}
	for _, name := range []string{
		"mount", "umount2", "fsopen", "fsconfig", "fsmount", "move_mount", "open_tree",
		"mount_setattr", "pivot_root", "chroot", "unshare", "setns",
		"keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
		"io_uring_setup", "io_uring_enter", "io_uring_register",
		"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
		"reboot", "swapon", "swapoff", "settimeofday", "clock_settime", "acct",
		"quotactl", "quotactl_fd", "open_by_handle_at", "ptrace", "process_vm_readv",
		"process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise", "syslog",
		"modify_ldt", "uselib", "sethostname", "vhangup", "fanotify_init",
		"get_mempolicy", "move_pages",
	} {
		cases = append(cases, policyCase{c(name), eperm})
	}
	checkCases(t, "default", append(cases, setuidCases()...))
}

// What strict allows is what the tools above need; anything else is EPERM.
func TestStrictPolicy(t *testing.T) {
	cases := []policyCase{
		{c("read"), allow},
		{c("write"), allow},
		{c("execve"), allow},
		{c("openat", 0, 0, unix.O_RDONLY), allow},
		{c("mknodat", 0, 0, unix.S_IFIFO|0o644), allow},
		{c("futex"), allow},
		{c("rt_sigaction"), allow},
		{c("wait4"), allow},
		{c("clone", sigchld), allow},
		{c("clone", cloneThread), allow},
		{c("clone", cloneNewUser|sigchld), eperm},
		{c("clone", cloneNewNS|cloneThread), eperm},
		{c("clone3"), enosys},
		{c("openat2"), enosys},
		{c("socket", unix.AF_UNIX), allow},
		{c("socket", unix.AF_INET), allow},
		{c("socket", unix.AF_INET6), allow},
		{c("socket", unix.AF_NETLINK), allow},
		{c("socket", unix.AF_PACKET), eperm},
		{c("socket", unix.AF_TIPC), eperm},
		{c("socket", afALG), eperm},
		{c("socket", 1<<32|afALG), eperm},
		{c("ioctl", 0, unix.TCGETS), allow},
		{c("ioctl", 0, unix.TIOCGWINSZ), allow},
		{c("ioctl", 0, 0x541b), allow}, // FIONREAD
		{c("ioctl", 0, tiocsti), eperm},
		{c("ioctl", 0, 0xffffffff00000000|tioclinux), eperm},
		{c("personality", 0), allow},
		{c("personality", 1), eperm},
		{c("mount"), eperm},
		{c("unshare"), eperm},
		{c("ptrace"), eperm},
		{c("keyctl"), eperm},
		{c("io_uring_setup"), eperm},
		{c("name_to_handle_at"), eperm},
		{c("modify_ldt"), eperm},
		{c("syslog"), eperm},
	}
	checkCases(t, "strict", append(cases, setuidCases()...))
}

// setuidCases: no mode with S_ISUID or S_ISGID, from any call that sets one.
func setuidCases() []policyCase {
	var cases []policyCase
	for name, at := range map[string]int{
		"chmod": 1, "fchmod": 1, "creat": 1, "mknod": 1,
		"fchmodat": 2, "fchmodat2": 2, "open": 2, "mknodat": 2, "openat": 3,
	} {
		for mode, want := range map[uint64]seccomp.Action{
			0o755: allow, 0o1777: allow, unix.S_IFREG | 0o644: allow,
			0o4755: eperm, 0o2755: eperm, 0o6711: eperm, unix.S_IFREG | 0o4755: eperm, 1<<40 | 0o2000: eperm,
		} {
			var args [6]uint64
			args[at] = mode
			cases = append(cases, policyCase{call{name, args}, want})
		}
	}
	return cases
}

// Docker's personality rule: these values, compared as 64 bits, and no
// other. Both policies encode it without libseccomp's missing "one of".
var dockerPersonas = []uint64{0, 8, 0x20000, 0x20008, 0xffffffff}

func TestPersonality(t *testing.T) {
	values := slices.Clone(dockerPersonas)
	for _, v := range dockerPersonas {
		for b := range 64 {
			values = append(values, v^1<<b)
		}
	}
	for b := range 32 {
		for b2 := range 32 {
			values = append(values, 1<<b|1<<b2, 1<<b|1<<b2|8, 1<<b|1<<b2|0x20000)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		values = append(values, rng.Uint64(), uint64(rng.Uint32()), uint64(rng.Uint32())|0x20008)
	}
	for _, name := range builtinPolicies {
		m := newModel(loadPolicy(t, name))
		bad := 0
		for _, v := range values {
			want := slices.Contains(dockerPersonas, v)
			if name == "default" {
				// default reads the persona as the kernel does, an
				// unsigned int; strict compares all 64 bits, as Docker.
				want = slices.Contains(dockerPersonas, uint64(uint32(v)))
			}
			if got := m.decide(c("personality", v)).Kind == seccomp.Allow; got != want && bad < 10 {
				t.Errorf("%s: personality(%#x) allowed %v, want %v", name, v, got, want)
				bad++
			}
		}
	}
}

// TIOCSTI and TIOCLINUX are denied whatever the high 32 bits, which the
// kernel ignores; every other request is allowed, in both policies.
func TestTerminalInjection(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, name := range builtinPolicies {
		m := newModel(loadPolicy(t, name))
		bad := 0
		check := func(req uint64) {
			low := uint32(req)
			want := low != tiocsti && low != tioclinux
			if got := m.decide(c("ioctl", 0, req)).Kind == seccomp.Allow; got != want && bad < 10 {
				t.Errorf("%s: ioctl request %#x allowed %v, want %v", name, req, got, want)
				bad++
			}
		}
		for _, req := range []uint64{tiocsti, tioclinux} {
			check(req)
			for b := range 64 {
				check(req ^ 1<<b)
			}
			for range 1000 {
				check(rng.Uint64()<<32 | req)
			}
		}
		for range 100000 {
			check(rng.Uint64())
			check(uint64(rng.Uint32()))
		}
	}
}

// strict is the stricter: whatever it allows, default allows too.
func TestStrictWithinDefault(t *testing.T) {
	strict, dflt := loadPolicy(t, "strict"), loadPolicy(t, "default")
	sm, dm := newModel(strict), newModel(dflt)
	for _, name := range nativeSyscalls(t) {
		for _, args := range argSamples(name, strict, dflt) {
			cl := call{name, args}
			if s, d := sm.decide(cl), dm.decide(cl); s.Kind == seccomp.Allow && d.Kind != seccomp.Allow {
				t.Errorf("%s%#x: strict allows, default: %v", name, args, d)
			}
		}
	}
}

// nativeSyscalls are the names of this architecture's syscalls, as this
// libseccomp knows them.
func nativeSyscalls(t *testing.T) []string {
	t.Helper()
	var names []string
	for nr := range 1024 {
		if name, err := libseccomp.ScmpSyscall(nr).GetName(); err == nil {
			names = append(names, name)
		}
	}
	if len(names) < 300 {
		t.Fatalf("libseccomp names only %d syscalls on this architecture", len(names))
	}
	return names
}

// argSamples are argument vectors that tell the policies' rules for a
// syscall apart: no arguments, and, one argument at a time, every value a
// rule compares it with, its neighbours, its mask, each bit of the mask
// flipped, and those with the bits the kernel ignores or the mask leaves
// out set.
func argSamples(name string, ps ...*seccomp.Policy) [][6]uint64 {
	vals := map[uint]map[uint64]bool{}
	add := func(i uint, vs ...uint64) {
		if vals[i] == nil {
			vals[i] = map[uint64]bool{}
		}
		for _, v := range vs {
			vals[i][v] = true
		}
	}
	for _, p := range ps {
		for _, r := range p.Rules {
			if !slices.Contains(expand(r.Names), name) {
				continue
			}
			for _, c := range r.Conds {
				v := c.Value
				add(c.Index, v, v-1, v+1, v|1<<32, v|0xffffffff00000000, ^v, 0xffffffff, ^uint64(0))
				if c.Op == seccomp.MaskedEq {
					add(c.Index, c.Mask, v^c.Mask, v|^c.Mask, c.Mask&^v)
					for b := range 64 {
						if c.Mask&(1<<b) != 0 {
							add(c.Index, v^1<<b) // one flag of many
						}
					}
				}
			}
		}
	}
	samples := [][6]uint64{{}}
	for i, vs := range vals {
		for v := range vs {
			var a [6]uint64
			a[i] = v
			samples = append(samples, a)
		}
	}
	return samples
}
