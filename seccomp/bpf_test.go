package seccomp_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/seccomp"
)

// The compiled filter must do what the policy says, as the language reads
// (the last rule whose conditions hold wins): these tests run the BPF the
// kernel would run, with an interpreter of classic BPF, on sampled calls,
// and compare it with the model in oci_test.go.

// auditArch is seccomp_data.arch for this machine.
func auditArch(t *testing.T) uint32 {
	switch runtime.GOARCH {
	case "amd64":
		return 0xc000003e
	case "arm64":
		return 0xc00000b7
	}
	t.Skipf("no audit arch for %s", runtime.GOARCH)
	return 0
}

// runBPF runs a classic BPF program (struct sock_filter[]) on data as the
// kernel's seccomp does and returns what it returns.
func runBPF(t *testing.T, prog []byte, data []byte) uint32 {
	t.Helper()
	var a, x uint32
	var mem [16]uint32
	n := len(prog) / 8
	for pc := 0; pc < n; pc++ {
		in := prog[pc*8:]
		code := binary.LittleEndian.Uint16(in)
		jt, jf := int(in[2]), int(in[3])
		k := binary.LittleEndian.Uint32(in[4:])
		src := k
		if code&0x08 != 0 { // BPF_X
			src = x
		}
		switch code & 0x07 {
		case 0x00: // BPF_LD
			switch code & 0xe0 {
			case 0x20: // BPF_ABS, BPF_W
				a = binary.LittleEndian.Uint32(data[k:])
			case 0x00:
				a = k
			case 0x60:
				a = mem[k]
			default:
				t.Fatalf("pc %d: load mode %#x", pc, code)
			}
		case 0x01: // BPF_LDX
			if code&0xe0 == 0x60 {
				x = mem[k]
			} else {
				x = k
			}
		case 0x02:
			mem[k] = a
		case 0x03:
			mem[k] = x
		case 0x04: // BPF_ALU
			switch code & 0xf0 {
			case 0x00:
				a += src
			case 0x10:
				a -= src
			case 0x40:
				a |= src
			case 0x50:
				a &= src
			case 0x60:
				a <<= src
			case 0x70:
				a >>= src
			case 0xa0:
				a ^= src
			default:
				t.Fatalf("pc %d: alu op %#x", pc, code)
			}
		case 0x05: // BPF_JMP
			var taken bool
			switch code & 0xf0 {
			case 0x00:
				pc += int(k)
				continue
			case 0x10:
				taken = a == src
			case 0x20:
				taken = a > src
			case 0x30:
				taken = a >= src
			case 0x40:
				taken = a&src != 0
			default:
				t.Fatalf("pc %d: jump op %#x", pc, code)
			}
			if taken {
				pc += jt
			} else {
				pc += jf
			}
		case 0x06: // BPF_RET
			if code&0x18 == 0x10 {
				return a
			}
			return k
		case 0x07: // BPF_MISC
			if code&0xf8 == 0x80 {
				a = x
			} else {
				x = a
			}
		}
	}
	t.Fatal("the program ran off its end")
	return 0
}

// seccompData is struct seccomp_data for a call.
func seccompData(arch uint32, nr int, args [6]uint64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(int32(nr)))
	b = binary.LittleEndian.AppendUint32(b, arch)
	b = binary.LittleEndian.AppendUint64(b, 0x401000) // instruction pointer
	for _, v := range args {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

// outcome is what the process sees: the filter's verdict, with calls handed
// to the runner answered as the runner answers them.
func outcome(t *testing.T, prog *seccomp.Program, nr int, args [6]uint64, arch uint32) string {
	ret := runBPF(t, prog.BPF, seccompData(arch, nr, args))
	switch ret & 0xffff0000 {
	case 0x7fff0000:
		return "allow"
	case 0x7ffc0000:
		return "log"
	case 0x80000000:
		return "kill_process"
	case 0x00000000:
		return "kill_thread"
	case 0x00030000:
		return "trap"
	case 0x00050000:
		return fmt.Sprintf("errno %d", ret&0xffff)
	case 0x7fc00000: // USER_NOTIF: the runner's answer
		if prog.Audit {
			return "reported"
		}
		errno := prog.DefaultErrno
		for _, a := range prog.Answers {
			if a.Nr == nr && holdsAll(a.Conds, args) {
				errno = a.Errno
			}
		}
		return fmt.Sprintf("errno %d", errno)
	}
	return fmt.Sprintf("ret %#x", ret)
}

func holdsAll(conds []seccomp.Cond, args [6]uint64) bool { return holds(conds, args) }

// want is what the model says, in outcome's terms.
func want(a seccomp.Action, audit bool) string {
	switch {
	case audit && a.Kind != seccomp.Allow && a.Kind != seccomp.Log:
		return "reported"
	case a.Kind == seccomp.Errno:
		return fmt.Sprintf("errno %d", a.Errno)
	case a.Kind == seccomp.Notify:
		return fmt.Sprintf("errno %d", unix.EPERM)
	}
	return a.Kind.String()
}

// compareCompiled checks the compiled policy against the model on every
// named syscall of this architecture with sampled arguments, and on
// numbers past libseccomp's table.
func compareCompiled(t *testing.T, label string, p *seccomp.Policy, names []string, audit bool) (mismatches int) {
	t.Helper()
	arch := auditArch(t)
	prog, err := seccomp.Compile(p, seccomp.Mode{Audit: audit})
	if err != nil {
		t.Errorf("%s: %v", label, err)
		return 1
	}
	m := newModel(p)
	for _, name := range names {
		nr, err := libseccomp.GetSyscallFromName(name)
		if err != nil {
			continue
		}
		for _, args := range append(argSamples(name, p), [6]uint64{}) {
			got := outcome(t, prog, int(nr), args, arch)
			if w := want(m.decide(c(name, args[:]...)), audit); got != w {
				if mismatches++; mismatches <= 5 {
					t.Errorf("%s: %s(%#x): compiled %s, policy says %s", label, name, args, got, w)
				}
			}
		}
	}
	return mismatches
}

func TestCompiledBuiltinsDoWhatTheyRead(t *testing.T) {
	names := nativeSyscalls(t)
	for _, name := range builtinPolicies {
		p := loadPolicy(t, name)
		for _, audit := range []bool{false, true} {
			compareCompiled(t, fmt.Sprintf("%s audit=%v", name, audit), p, names, audit)
		}
	}
	docker, _ := importDocker(t, runtime.GOARCH)
	compareCompiled(t, "docker", docker, names, false)
}

// A denylist answers syscalls past libseccomp's table ENOSYS; an
// allowlist its own default; a foreign ABI is killed by every policy.
func TestCompiledUnnamedAndForeign(t *testing.T) {
	arch := auditArch(t)
	deny := loadPolicy(t, "default")
	allowlist := loadPolicy(t, "strict")
	dp, err := seccomp.Compile(deny, seccomp.Mode{})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := seccomp.Compile(allowlist, seccomp.Mode{})
	if err != nil {
		t.Fatal(err)
	}
	for _, nr := range []int{468, 470, 500, 511} {
		if _, err := libseccomp.ScmpSyscall(nr).GetName(); err == nil {
			continue // this libseccomp knows it
		}
		if got := outcome(t, dp, nr, [6]uint64{}, arch); got != fmt.Sprintf("errno %d", unix.ENOSYS) {
			t.Errorf("default, syscall %d: %s, want ENOSYS", nr, got)
		}
		if got := outcome(t, sp, nr, [6]uint64{}, arch); got != fmt.Sprintf("errno %d", unix.EPERM) {
			t.Errorf("strict, syscall %d: %s, want EPERM", nr, got)
		}
	}
	const i386, arm = 0x40000003, 0x40000028
	for _, prog := range []*seccomp.Program{dp, sp} {
		for _, foreign := range []uint32{i386, arm} {
			if got := outcome(t, prog, 20, [6]uint64{}, foreign); got != "kill_process" {
				t.Errorf("arch %#x: %s, want kill_process", foreign, got)
			}
		}
		if runtime.GOARCH == "amd64" {
			if got := outcome(t, prog, 0x40000000|39, [6]uint64{}, arch); got != "kill_process" {
				t.Errorf("x32 getpid: %s, want kill_process", got)
			}
		}
	}
}

// Random small policies, on one syscall: every one the loader accepts (no
// RuleProblems) must compile to a filter that does what it reads, on every
// mix of the values its conditions compare with and their neighbours. The
// refused ones include those libseccomp 2.5 would compile otherwise (with
// resolve's restrictions lifted, this test finds them); some must be
// refused, or the generator is not reaching them.
func TestCompiledRandomPolicies(t *testing.T) {
	ops := []seccomp.Op{seccomp.Eq, seccomp.Ne, seccomp.Lt, seccomp.Le, seccomp.Gt, seccomp.Ge, seccomp.MaskedEq}
	actions := []seccomp.Action{
		{Kind: seccomp.Allow}, {Kind: seccomp.Errno, Errno: 1}, {Kind: seccomp.Errno, Errno: 13},
		{Kind: seccomp.KillProcess}, {Kind: seccomp.Trap}, {Kind: seccomp.Log}, {Kind: seccomp.Notify},
	}
	for _, values := range [][]uint64{
		{0, 1, 2, 5, 0x10, 0x5412, 0xffffffff},
		{0, 1, 2, 5, 0x10, 0x5412, 1<<32 | 2},
	} {
		for nargs := 1; nargs <= 3; nargs++ {
			rng := rand.New(rand.NewPCG(7, uint64(nargs)))
			accepted, refused := 0, 0
			for i := range 1500 {
				p := &seccomp.Policy{Name: fmt.Sprint("random", i), Default: actions[rng.IntN(3)]}
				p.Rules = append(p.Rules, seccomp.Rule{Names: seccomp.Needed, Action: actions[0]})
				for range 1 + rng.IntN(5) {
					r := seccomp.Rule{Names: []string{"socket"}, Action: actions[rng.IntN(len(actions))]}
					used := map[uint]bool{}
					for range 1 + rng.IntN(nargs) {
						c := seccomp.Cond{Index: uint(rng.IntN(nargs)), Op: ops[rng.IntN(len(ops))], Value: values[rng.IntN(len(values))]}
						if used[c.Index] {
							continue
						}
						used[c.Index] = true
						if c.Op == seccomp.MaskedEq {
							c.Mask = []uint64{0xff, 0xffff, 0xffffffff}[rng.IntN(3)]
							c.Value &= c.Mask
						}
						r.Conds = append(r.Conds, c)
					}
					p.Rules = append(p.Rules, r)
				}
				if len(p.RuleProblems()) > 0 {
					refused++
					continue
				}
				accepted++
				if n := quietCompare(t, p); n > 0 {
					t.Fatalf("values %#x, policy %d: %d calls compiled other than the policy reads: %+v", values, i, n, *p)
				}
			}
			t.Logf("values %#x, %d arguments: %d random policies compiled as they read; %d refused", values, nargs, accepted, refused)
			if accepted < 90 || refused < 50 {
				t.Errorf("accepted %d, refused %d: the generator misses a case", accepted, refused)
			}
		}
	}
}

// quietCompare counts mismatches on socket without reporting them.
func quietCompare(t *testing.T, p *seccomp.Policy) int {
	arch := auditArch(t)
	prog, err := seccomp.Compile(p, seccomp.Mode{})
	if err != nil {
		return 1
	}
	m := newModel(p)
	n := 0
	for _, args := range crossSamples("socket", p) {
		if outcome(t, prog, 41, args, arch) != want(m.decide(c("socket", args[:]...)), false) {
			n++
		}
	}
	return n
}

// crossSamples combines, argument by argument, the values argSamples
// tries one at a time: every mix of them for the compared arguments.
func crossSamples(name string, p *seccomp.Policy) [][6]uint64 {
	per := map[int]map[uint64]bool{}
	for _, s := range argSamples(name, p) {
		for i, v := range s {
			if v != 0 {
				if per[i] == nil {
					per[i] = map[uint64]bool{0: true}
				}
				per[i][v] = true
			}
		}
	}
	out := [][6]uint64{{}}
	for i := range 6 {
		if per[i] == nil {
			continue
		}
		var next [][6]uint64
		for _, o := range out {
			for v := range per[i] {
				o[i] = v
				next = append(next, o)
			}
		}
		out = next
	}
	return out
}
