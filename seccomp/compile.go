package seccomp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// Program is a policy compiled for this machine's architecture: the BPF the
// init stage loads just before exec, and what the runner needs to answer
// the calls the filter hands it.
type Program struct {
	BPF []byte // struct sock_filter[], as seccomp(2) takes it
	// Notify: the filter hands calls to the runner (SECCOMP_RET_USER_NOTIF),
	// so the init stage must load it with a listener and pass that on.
	Notify bool
	// Answers are, for calls the runner is handed, the errno to fail them
	// with: the policy's own errno rules, last match wins; DefaultErrno
	// when none matches. In audit mode the runner lets them through.
	Answers      []Answer
	DefaultErrno int
	Audit        bool
}

// Answer is one errno rule as the runner evaluates it against a handed
// call: the syscall (this architecture's number) and its conditions.
type Answer struct {
	Nr    int
	Errno int
	Conds []Cond
}

// Mode is how a policy's denials are enforced.
type Mode struct {
	// Audit lets through every call the policy would refuse, reporting it:
	// to learn a policy from a real run.
	Audit bool
	// Quiet answers refusals by errno in the kernel, with no listener and
	// no report: for a jail that runs jails, since the kernel allows one
	// listener in a filter tree.
	Quiet bool
}

// Compile turns a policy into a BPF program for this machine. Denials by
// errno are handed to the runner (SECCOMP_RET_USER_NOTIF), which answers
// with the errno and reports each: only denied calls pay for that; allowed
// ones never leave the kernel. ENOSYS answers are the exception, made in
// the kernel and not reported: they ask libc to fall back (clone3 -> clone)
// and are hit on every fork. A call of a foreign ABI (i386 int 0x80, x32 on
// x86_64; arm32 on arm64) kills the process.
func Compile(p *Policy, mode Mode) (*Program, error) {
	filter, prog, err := build(p, mode)
	if err != nil {
		return nil, err
	}
	defer filter.Release()
	prog.BPF, err = exportBPF(filter)
	return prog, err
}

// ExportPFC writes libseccomp's readable form of the compiled policy.
func ExportPFC(p *Policy, mode Mode, w *os.File) error {
	filter, _, err := build(p, mode)
	if err != nil {
		return err
	}
	defer filter.Release()
	return filter.ExportPFC(w)
}

// build makes the libseccomp filter for the policy; the caller releases it.
func build(p *Policy, mode Mode) (*libseccomp.ScmpFilter, *Program, error) {
	if p.None {
		return nil, nil, errors.New("policy none has no program")
	}
	arch, err := libseccomp.GetNativeArch()
	if err != nil {
		return nil, nil, fmt.Errorf("seccomp: native architecture: %w", err)
	}
	rules, err := expand(p, arch)
	if err != nil {
		return nil, nil, err
	}
	prog := &Program{Audit: mode.Audit}
	def, err := prog.action(p.Default, mode, nil)
	if err != nil {
		return nil, nil, err
	}
	filter, err := libseccomp.NewFilter(def)
	if err != nil {
		return nil, nil, fmt.Errorf("seccomp: new filter: %w", err)
	}
	fail := func(err error) (*libseccomp.ScmpFilter, *Program, error) {
		filter.Release()
		return nil, nil, err
	}
	if err := filter.SetBadArchAction(libseccomp.ActKillProcess); err != nil {
		return fail(fmt.Errorf("seccomp: foreign ABIs: %w", err))
	}
	// A binary tree over syscall numbers: an allowed call walks a handful
	// of compares, not every rule (about 60 instructions, not 400, for
	// default).
	if err := filter.SetOptimize(2); err != nil {
		return fail(fmt.Errorf("seccomp: binary tree: %w", err))
	}
	// The init stage sets no_new_privs itself, before loading.
	if err := filter.SetNoNewPrivsBit(false); err != nil {
		return fail(fmt.Errorf("seccomp: %w", err))
	}
	for _, r := range rules {
		act, err := prog.action(r.action, mode, &r)
		if err != nil {
			return fail(err)
		}
		if act == def {
			continue // what the default does anyway
		}
		conds, err := scmpConds(r.conds)
		if err != nil {
			return fail(fmt.Errorf("seccomp: %s: %w", r.name, err))
		}
		if err := filter.AddRuleConditional(r.nr, act, conds); err != nil {
			return fail(fmt.Errorf("seccomp: rule for %s %v: %w", r.name, r.conds, err))
		}
	}
	if p.Default.Kind == Allow || p.Default.Kind == Log {
		if err := denyUnnamed(filter, arch, prog, mode); err != nil {
			return fail(err)
		}
	}
	return filter, prog, nil
}

// unnamedUpTo bounds the syscall numbers denyUnnamed covers: above the
// newest this libseccomp knows (456 in 2.5.x) and up to 511, where x86_64's
// x32 numbers begin. Linux 6.18 ends at 470; at a dozen a year that leaves
// years of headroom. Each number costs the filter an instruction or two,
// and each instruction costs the kernel about half a microsecond to attach
// (bench: ~0.45 us per instruction, JIT and cache), so not more.
const unnamedUpTo = 511

// denyUnnamed answers ENOSYS, as a kernel without them would, to syscalls
// newer than libseccomp's table: a denylist cannot name them, and would
// otherwise let every new kernel interface through unreviewed (listns,
// file_setattr, open_tree_attr on Linux 6.17+). An allowlist needs no such
// rule: its default already refuses them.
func denyUnnamed(filter *libseccomp.ScmpFilter, arch libseccomp.ScmpArch, prog *Program, mode Mode) error {
	newest := 0
	for nr := 0; nr <= unnamedUpTo; nr++ {
		if _, err := libseccomp.ScmpSyscall(nr).GetNameByArch(arch); err == nil {
			newest = nr
		}
	}
	for nr := newest + 1; nr <= unnamedUpTo; nr++ {
		r := compiled{name: fmt.Sprintf("syscall_%d", nr), nr: libseccomp.ScmpSyscall(nr)}
		act, err := prog.action(Action{Kind: Errno, Errno: int(unix.ENOSYS)}, mode, &r)
		if err != nil {
			return err
		}
		if err := filter.AddRule(r.nr, act); err != nil {
			return fmt.Errorf("seccomp: rule for unnamed syscall %d: %w", nr, err)
		}
	}
	return nil
}

// compiled is one rule for one syscall of this architecture.
type compiled struct {
	name   string
	nr     libseccomp.ScmpSyscall
	action Action
	conds  []Cond
}

// expand resolves the rules (resolve) and the syscall numbers of this
// architecture.
func expand(p *Policy, arch libseccomp.ScmpArch) ([]compiled, error) {
	rules, errs := p.resolve()
	if len(errs) > 0 {
		return nil, fmt.Errorf("seccomp: %w", errs[0])
	}
	var out []compiled
	for _, r := range rules {
		nr, err := libseccomp.GetSyscallFromNameByArch(r.name, arch)
		if err != nil {
			if Known(r.name) {
				continue // another architecture's syscall
			}
			return nil, fmt.Errorf("seccomp: unknown syscall %q", r.name)
		}
		out = append(out, compiled{name: r.name, nr: nr, action: r.action, conds: r.conds})
	}
	return out, nil
}

func expandNames(names []string, seen map[string]bool) ([]string, error) {
	var out []string
	for _, n := range names {
		if !strings.HasPrefix(n, "@") {
			out = append(out, n)
			continue
		}
		g, ok := Groups[n]
		if !ok {
			return nil, fmt.Errorf("seccomp: unknown group %q", n)
		}
		if seen[n] {
			return nil, fmt.Errorf("seccomp: group %s includes itself", n)
		}
		seen[n] = true
		more, err := expandNames(g.Syscalls, seen)
		if err != nil {
			return nil, err
		}
		delete(seen, n)
		out = append(out, more...)
	}
	return out, nil
}

// action maps a policy action to libseccomp's, noting in prog what the
// runner must answer for calls handed to it. r is nil for the default.
func (prog *Program) action(a Action, mode Mode, r *compiled) (libseccomp.ScmpAction, error) {
	if mode.Audit && a.Kind != Allow && a.Kind != Log {
		// Every refusal, kills included, becomes a report; the runner
		// lets the call through.
		prog.Notify = true
		return libseccomp.ActNotify, nil
	}
	switch a.Kind {
	case Allow:
		return libseccomp.ActAllow, nil
	case Errno:
		if a.Errno == int(unix.ENOSYS) || mode.Quiet {
			return libseccomp.ActErrno.SetReturnCode(int16(a.Errno)), nil
		}
		prog.Notify = true
		if r == nil {
			prog.DefaultErrno = a.Errno
		} else {
			prog.Answers = append(prog.Answers, Answer{Nr: int(r.nr), Errno: a.Errno, Conds: r.conds})
		}
		return libseccomp.ActNotify, nil
	case Notify:
		if mode.Quiet {
			return libseccomp.ActErrno.SetReturnCode(int16(unix.EPERM)), nil
		}
		prog.Notify = true
		if r == nil {
			prog.DefaultErrno = int(unix.EPERM)
		} else {
			prog.Answers = append(prog.Answers, Answer{Nr: int(r.nr), Errno: int(unix.EPERM), Conds: r.conds})
		}
		return libseccomp.ActNotify, nil
	case KillProcess:
		return libseccomp.ActKillProcess, nil
	case KillThread:
		return libseccomp.ActKillThread, nil
	case Trap:
		return libseccomp.ActTrap, nil
	case Log:
		return libseccomp.ActLog, nil
	}
	return 0, fmt.Errorf("seccomp: unknown action %v", a.Kind)
}

var scmpOps = map[Op]libseccomp.ScmpCompareOp{
	Eq: libseccomp.CompareEqual, Ne: libseccomp.CompareNotEqual, Lt: libseccomp.CompareLess,
	Le: libseccomp.CompareLessOrEqual, Gt: libseccomp.CompareGreater, Ge: libseccomp.CompareGreaterEqual,
	MaskedEq: libseccomp.CompareMaskedEqual,
}

func scmpConds(conds []Cond) ([]libseccomp.ScmpCondition, error) {
	var out []libseccomp.ScmpCondition
	for _, c := range conds {
		var sc libseccomp.ScmpCondition
		var err error
		if c.Op == MaskedEq {
			sc, err = libseccomp.MakeCondition(c.Index, libseccomp.CompareMaskedEqual, c.Mask, c.Value)
		} else {
			sc, err = libseccomp.MakeCondition(c.Index, scmpOps[c.Op], c.Value)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// exportBPF reads the compiled program through a memfd: libseccomp 2.5
// writes it only to a file descriptor.
func exportBPF(f *libseccomp.ScmpFilter) ([]byte, error) {
	fd, err := unix.MemfdCreate("seccomp-bpf", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("seccomp: export: %w", err)
	}
	file := os.NewFile(uintptr(fd), "seccomp-bpf")
	defer file.Close()
	if err := f.ExportBPF(file); err != nil {
		return nil, fmt.Errorf("seccomp: export: %w", err)
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(file)
}

// SyscallName is a syscall number's name on this architecture.
func SyscallName(nr int) string {
	name, err := libseccomp.ScmpSyscall(nr).GetName()
	if err != nil {
		return fmt.Sprintf("syscall_%d", nr)
	}
	return name
}

// GroupNames lists the groups by name, for jail seccomp groups.
func GroupNames() []string {
	names := make([]string, 0, len(Groups))
	for n := range Groups {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
