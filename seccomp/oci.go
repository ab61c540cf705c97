package seccomp

// Importing seccomp profiles in the OCI runtime-spec / Docker JSON format,
// so a team can reuse the profile it already trusts (Docker's default.json,
// a runc config's linux.seccomp).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ImportOCI reads a seccomp profile in the OCI / Docker JSON format for arch
// ("amd64" or "arm64", Go's names), as Docker and runc would apply it to a
// process with no capabilities on the running kernel, which is what a jail
// is:
//
//   - a rule whose includes names capabilities is dropped (the jail has
//     none of them); excludes.caps never drops a rule;
//   - includes.arches keeps a rule only for arch, excludes.arches drops it
//     for arch; Docker's names ("amd64", "arm64") and libseccomp's
//     ("SCMP_ARCH_X86_64") both match, and the 32-bit ABIs ("x86", "x32",
//     "arm") do not: a jail kills every call of a foreign ABI instead;
//   - includes.minKernel keeps a rule only on a kernel at least that new
//     (uname's release), excludes.minKernel drops it there.
//
// Actions map to the policy's (SCMP_ACT_KILL is libseccomp's kill-thread);
// an errno action without errnoRet returns EPERM, as runc's does;
// SCMP_ACT_TRACE becomes ENOSYS, what the kernel answers with no tracer
// attached. SCMP_CMP_MASKED_EQ takes value as the mask and valueTwo as what
// the masked argument must equal. An entry with two conditions on one
// argument becomes one rule per condition, as runc makes it (libseccomp
// cannot AND them).
//
// A syscall name libseccomp does not know is skipped. Every such change to
// what the profile meant comes back as a warning (a skipped name, an
// ignored listener or flag, ABIs killed rather than filtered, two entries
// at odds), naming the entry as syscalls[i], counted from 0 as in the
// JSON. Malformed input (bad JSON, an unknown key, action or op, an
// argument index above 5, an errno out of 1..4095) is an error. The
// policy's Name is left for the caller.
func ImportOCI(data []byte, arch string) (*Policy, []string, error) {
	a, ok := ociArches[arch]
	if !ok {
		return nil, nil, fmt.Errorf("oci seccomp: architecture %q: want amd64 or arm64", arch)
	}
	var prof ociProfile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a key we do not know could be one that changes the meaning
	if err := dec.Decode(&prof); err != nil {
		return nil, nil, fmt.Errorf("oci seccomp: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("oci seccomp: data after the profile's JSON object")
	}
	im := ociImport{arch: a}
	im.kernel, im.kernelErr = runningKernel() // an error matters only to a minKernel
	p, err := im.profile(&prof)
	if err != nil {
		return nil, nil, fmt.Errorf("oci seccomp: %w", err)
	}
	if errs := p.Check(); len(errs) > 0 {
		return nil, nil, fmt.Errorf("oci seccomp: %w", errors.Join(errs...))
	}
	return p, im.warnings, nil
}

// ociProfile is the JSON: the OCI runtime spec's LinuxSeccomp, with
// Docker's archMap and per-entry includes and excludes.
type ociProfile struct {
	DefaultAction    string       `json:"defaultAction"`
	DefaultErrnoRet  *int64       `json:"defaultErrnoRet"`
	Architectures    []string     `json:"architectures"`
	ArchMap          []ociArchMap `json:"archMap"`
	Flags            []string     `json:"flags"`
	ListenerPath     string       `json:"listenerPath"`
	ListenerMetadata string       `json:"listenerMetadata"`
	Syscalls         []ociSyscall `json:"syscalls"`
}

type ociArchMap struct {
	Architecture     string   `json:"architecture"`
	SubArchitectures []string `json:"subArchitectures"`
}

type ociSyscall struct {
	Names    []string   `json:"names"`
	Name     string     `json:"name"`
	Action   string     `json:"action"`
	ErrnoRet *int64     `json:"errnoRet"`
	Args     []ociArg   `json:"args"`
	Comment  string     `json:"comment"`
	Includes *ociFilter `json:"includes"`
	Excludes *ociFilter `json:"excludes"`
}

type ociArg struct {
	Index    uint   `json:"index"`
	Value    uint64 `json:"value"`
	ValueTwo uint64 `json:"valueTwo"`
	Op       string `json:"op"`
}

type ociFilter struct {
	Caps      []string `json:"caps"`
	Arches    []string `json:"arches"`
	MinKernel string   `json:"minKernel"`
}

// ociArch is what an architecture is called in a profile.
type ociArch struct {
	names []string // in includes/excludes.arches
	scmp  string   // in architectures and archMap
}

// ociArches are the architectures jail runs on, by Go's name.
var ociArches = map[string]ociArch{
	"amd64": {names: []string{"amd64", "x86_64", "SCMP_ARCH_X86_64"}, scmp: "SCMP_ARCH_X86_64"},
	"arm64": {names: []string{"arm64", "aarch64", "SCMP_ARCH_AARCH64"}, scmp: "SCMP_ARCH_AARCH64"},
}

var ociOps = map[string]Op{
	"SCMP_CMP_NE": Ne, "SCMP_CMP_LT": Lt, "SCMP_CMP_LE": Le, "SCMP_CMP_EQ": Eq,
	"SCMP_CMP_GE": Ge, "SCMP_CMP_GT": Gt, "SCMP_CMP_MASKED_EQ": MaskedEq,
}

// kernelVersion is a kernel's major and minor version: what minKernel
// compares.
type kernelVersion struct{ major, minor int }

func (k kernelVersion) atLeast(o kernelVersion) bool {
	return k.major > o.major || k.major == o.major && k.minor >= o.minor
}

// parseMinKernel reads a profile's minKernel: "MAJOR.MINOR", as Docker
// reads it.
func parseMinKernel(s string) (kernelVersion, error) {
	major, minor, ok := strings.Cut(s, ".")
	x, err1 := strconv.ParseUint(major, 10, 8)
	y, err2 := strconv.ParseUint(minor, 10, 8)
	if !ok || err1 != nil || err2 != nil || x == 0 && y == 0 {
		return kernelVersion{}, fmt.Errorf("kernel version %q: want MAJOR.MINOR, such as \"4.8\"", s)
	}
	return kernelVersion{int(x), int(y)}, nil
}

// runningKernel is uname's release, for minKernel.
func runningKernel() (kernelVersion, error) {
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return kernelVersion{}, fmt.Errorf("uname: %w", err)
	}
	release := unix.ByteSliceToString(uts.Release[:])
	var k kernelVersion
	if _, err := fmt.Sscanf(release, "%d.%d", &k.major, &k.minor); err != nil {
		return kernelVersion{}, fmt.Errorf("kernel release %q: %w", release, err)
	}
	return k, nil
}

// ociImport is one import under way: what it is for, and what it warns.
type ociImport struct {
	arch      ociArch
	kernel    kernelVersion
	kernelErr error
	warnings  []string
}

func (im *ociImport) warn(format string, args ...any) {
	im.warnings = append(im.warnings, fmt.Sprintf(format, args...))
}

func (im *ociImport) profile(prof *ociProfile) (*Policy, error) {
	if prof.DefaultAction == "" {
		return nil, errors.New("defaultAction: required")
	}
	def, err := im.action(prof.DefaultAction, prof.DefaultErrnoRet, "defaultAction")
	if err != nil {
		return nil, err
	}
	if err := im.architectures(prof); err != nil {
		return nil, err
	}
	if len(prof.Flags) > 0 {
		im.warn("flags %v: ignored; jail loads its filters with the flags it needs", prof.Flags)
	}
	if prof.ListenerPath != "" || prof.ListenerMetadata != "" {
		im.warn("listenerPath: ignored; calls the profile hands to a listener (SCMP_ACT_NOTIFY) are refused with EPERM by jail's runner")
	}
	p := &Policy{Default: def}
	// A syscall and its conditions -> the entry that set its action: in
	// libseccomp two actions for one are an error; here the later wins.
	type setBy struct {
		entry  int
		action Action
	}
	at := map[string]setBy{}
	for i, sc := range prof.Syscalls {
		rules, err := im.syscall(i, &sc)
		if err != nil {
			return nil, fmt.Errorf("syscalls[%d]: %w", i, err)
		}
		for _, r := range rules {
			for _, n := range r.Names {
				key := fmt.Sprint(n, r.Conds)
				if prev, ok := at[key]; ok && prev.action != r.Action {
					im.warn("syscalls[%d]: %s, with the same conditions, also in syscalls[%d] with another action: the later entry wins", i, n, prev.entry)
				}
				at[key] = setBy{i, r.Action}
			}
		}
		p.Rules = append(p.Rules, rules...)
	}
	return p, nil
}

// architectures checks that the profile is meant for this architecture, and
// says that the other ABIs it lists are killed, not filtered by it.
func (im *ociImport) architectures(prof *ociProfile) error {
	if len(prof.Architectures) > 0 && len(prof.ArchMap) > 0 {
		return errors.New("both architectures and archMap: give one, as Docker requires")
	}
	var listed, subs []string
	for _, m := range prof.ArchMap {
		listed = append(listed, m.Architecture)
		if m.Architecture == im.arch.scmp {
			subs = m.SubArchitectures
		}
	}
	if len(prof.Architectures) > 0 {
		listed = prof.Architectures
		for _, x := range listed {
			if x != im.arch.scmp {
				subs = append(subs, x)
			}
		}
	}
	if len(listed) > 0 && !slices.Contains(listed, im.arch.scmp) {
		im.warn("the profile lists architectures %v, not %s: its rules may not be meant for this one", listed, im.arch.scmp)
	}
	if len(subs) > 0 {
		im.warn("architectures %v: a jail kills every call of a foreign ABI rather than filtering it", subs)
	}
	return nil
}

// syscall turns one entry into rules: none when it does not apply to this
// jail, one per condition when it compares one argument twice.
func (im *ociImport) syscall(i int, sc *ociSyscall) ([]Rule, error) {
	names := sc.Names
	switch {
	case sc.Name != "" && len(sc.Names) > 0:
		return nil, errors.New("both name and names: give one")
	case sc.Name != "":
		names = []string{sc.Name}
	case len(names) == 0:
		return nil, errors.New("names: no syscall named")
	}
	act, err := im.action(sc.Action, sc.ErrnoRet, "action")
	if err != nil {
		return nil, err
	}
	var conds []Cond
	seen := map[uint]bool{}
	twice := false
	for j, arg := range sc.Args {
		c, err := ociCond(arg)
		if err != nil {
			return nil, fmt.Errorf("args[%d]: %w", j, err)
		}
		twice = twice || seen[c.Index]
		seen[c.Index] = true
		conds = append(conds, c)
	}
	applies, err := im.applies(sc)
	if err != nil || !applies {
		return nil, err
	}
	var known []string
	for _, n := range names {
		if strings.HasPrefix(n, "@") || !Known(n) {
			im.warn("syscalls[%d]: unknown syscall %q: skipped", i, n)
			continue
		}
		known = append(known, n)
	}
	if len(known) == 0 {
		return nil, nil
	}
	comment := fmt.Sprintf("OCI syscalls[%d]", i)
	if sc.Comment != "" {
		comment += ": " + sc.Comment
	}
	if !twice {
		return []Rule{{Names: known, Action: act, Conds: conds, Comment: comment}}, nil
	}
	im.warn("syscalls[%d]: several conditions on one argument: one rule each, as runc does, so either matching is enough (for an allow, wider than the JSON reads)", i)
	rules := make([]Rule, len(conds))
	for j, c := range conds {
		rules[j] = Rule{Names: known, Action: act, Conds: []Cond{c}, Comment: comment}
	}
	return rules, nil
}

// applies evaluates an entry's includes and excludes for a jail: no
// capabilities, this architecture, this kernel.
func (im *ociImport) applies(sc *ociSyscall) (bool, error) {
	if f := sc.Includes; f != nil {
		if len(f.Caps) > 0 {
			return false, nil // needs capabilities a jail never has
		}
		if len(f.Arches) > 0 && !im.archIn(f.Arches) {
			return false, nil
		}
		if f.MinKernel != "" {
			newer, err := im.kernelAtLeast(f.MinKernel)
			if err != nil {
				return false, fmt.Errorf("includes.minKernel: %w", err)
			}
			if !newer {
				return false, nil
			}
		}
	}
	if f := sc.Excludes; f != nil {
		// excludes.caps drops a rule for a process holding any of them:
		// never a jail.
		if len(f.Arches) > 0 && im.archIn(f.Arches) {
			return false, nil
		}
		if f.MinKernel != "" {
			newer, err := im.kernelAtLeast(f.MinKernel)
			if err != nil {
				return false, fmt.Errorf("excludes.minKernel: %w", err)
			}
			if newer {
				return false, nil
			}
		}
	}
	return true, nil
}

// kernelAtLeast compares the running kernel with a minKernel, "X.Y".
func (im *ociImport) kernelAtLeast(version string) (bool, error) {
	least, err := parseMinKernel(version)
	if err != nil {
		return false, err
	}
	if im.kernelErr != nil {
		return false, im.kernelErr
	}
	return im.kernel.atLeast(least), nil
}

func (im *ociImport) archIn(arches []string) bool {
	for _, x := range arches {
		if slices.Contains(im.arch.names, x) {
			return true
		}
	}
	return false
}

// action maps an SCMP_ACT_* name, with its errnoRet, to a policy action.
func (im *ociImport) action(name string, errnoRet *int64, key string) (Action, error) {
	switch name {
	case "SCMP_ACT_ERRNO":
		if errnoRet == nil {
			return Action{Kind: Errno, Errno: int(unix.EPERM)}, nil
		}
		if *errnoRet < 1 || *errnoRet > 4095 {
			return Action{}, fmt.Errorf("errno %d: jail returns errors 1 to 4095", *errnoRet)
		}
		return Action{Kind: Errno, Errno: int(*errnoRet)}, nil
	case "SCMP_ACT_TRACE":
		im.warn("%s %s: no tracer in a jail: the call fails with ENOSYS, as the kernel fails it without one", key, name)
		return Action{Kind: Errno, Errno: int(unix.ENOSYS)}, nil
	}
	if errnoRet != nil {
		return Action{}, fmt.Errorf("%s %s: an errno goes only with SCMP_ACT_ERRNO", key, name)
	}
	switch name {
	case "SCMP_ACT_ALLOW":
		return Action{Kind: Allow}, nil
	case "SCMP_ACT_KILL", "SCMP_ACT_KILL_THREAD":
		return Action{Kind: KillThread}, nil
	case "SCMP_ACT_KILL_PROCESS":
		return Action{Kind: KillProcess}, nil
	case "SCMP_ACT_TRAP":
		return Action{Kind: Trap}, nil
	case "SCMP_ACT_LOG":
		return Action{Kind: Log}, nil
	case "SCMP_ACT_NOTIFY":
		return Action{Kind: Notify}, nil
	}
	return Action{}, fmt.Errorf("%s: unknown action %q", key, name)
}

// ociCond maps one argument comparison.
func ociCond(a ociArg) (Cond, error) {
	op, ok := ociOps[a.Op]
	if !ok {
		return Cond{}, fmt.Errorf("op %q: want SCMP_CMP_NE, LT, LE, EQ, GE, GT or MASKED_EQ", a.Op)
	}
	if a.Index > 5 {
		return Cond{}, fmt.Errorf("index %d: syscalls have arguments 0 to 5", a.Index)
	}
	if op == MaskedEq {
		// OCI: value is the mask, valueTwo what the masked argument equals.
		return Cond{Index: a.Index, Op: op, Mask: a.Value, Value: a.ValueTwo}, nil
	}
	return Cond{Index: a.Index, Op: op, Value: a.Value}, nil
}
