package profiles

// Overrides: one run's changes to a loaded profile (the CLI's flags, a
// library caller's typed values), checked by the same rules as the file and
// reported by flag.

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Overrides are one run's changes to a profile, as the CLI's flags make
// them and as a library caller (sandbox.Run) gives them: typed values, the
// limits as the profile's [limits] holds them, nil for "as the profile
// says". Host paths relative to Cwd0 are made absolute, and absolute paths
// are cleaned ("dir/" is "dir"), as a shell user expects; "~/..." stays for
// Config to expand. Flags parses the CLI's spelling of the limits into
// these.
type Overrides struct {
	Workspace string   // --workspace DIR: the source of the profile's workspace mount(s)
	Binds     []string // --bind SRC[:DST]
	ROBinds   []string // --ro-bind SRC[:DST]
	Tmpfs     []string // --tmpfs DST[:SIZE[:MODE]]
	Env       []string // --env KEY=VALUE
	KeepEnv   []string // --keep-env KEY
	Cwd       string   // --cwd DIR
	Hostname  string   // --hostname NAME

	TimeLimit *time.Duration // --time-limit: wall time; 0: none
	Memory    *uint64        // --memory: bytes, and no swap; Unlimited: none
	Pids      *uint64        // --pids: processes and threads at once; Unlimited: none
	CPU       *float64       // --cpu: cores' worth of CPU time (0.5: half a core); 0: none
	MaxOutput *uint64        // --max-output: bytes of each of stdout and stderr; Unlimited: no cap
	Disk      *uint64        // --disk: bytes the jail may write to its writable binds; Unlimited: none
	// LimitsMode is --limits-mode: what a run does when the host cannot
	// give the cgroup limits.
	LimitsMode LimitsMode

	Network  NetworkMode // --network
	AuditLog string      // --audit-log PATH
	Secrets  string      // --secrets FILE
	Allow    []string    // --allow HOST[:PORT], implies allowlist
	PinHosts []string    // --pin-host NAME=ADDR, implies allowlist
	// Credentials are --credential ENV@HOST: HOST joins the binding of
	// ENV (made if the profile has none).
	Credentials []string
	// Seccomp is --seccomp NAME: a named policy, looked up as the profile's
	// own policy would be, or "none"; it replaces the profile's policy.
	Seccomp      string
	SeccompAudit bool   // --seccomp-audit: let denied calls through, reporting each
	Cwd0         string // the caller's working directory

	// unparsed are the flags Flags.Parse could not read, for Apply to
	// report in their place among the others'.
	unparsed []error
}

// Unlimited is no limit, for Overrides.Memory, Pids and MaxOutput (and
// as the profile holds it: unix.RLIM_INFINITY).
const Unlimited uint64 = unix.RLIM_INFINITY

// NetworkMode is a jail's network.
type NetworkMode string

// The network modes; "" leaves the profile's.
const (
	NetworkNone      NetworkMode = networkNone      // loopback only
	NetworkAllowlist NetworkMode = networkAllowlist // jail's proxy, to the allowed hosts only
	NetworkHost      NetworkMode = networkHost      // the host's network
)

// LimitsMode is what a run does when the host cannot give its cgroup
// limits.
type LimitsMode string

// The limits modes; "" leaves the profile's.
const (
	LimitsEnforce    LimitsMode = limitsEnforce    // the run fails
	LimitsBestEffort LimitsMode = limitsBestEffort // it runs with rlimit stand-ins
)

// Apply changes p by o, as the flags o stands for would. A mount at a
// destination the profile already mounts replaces it, as a child profile's
// would. --keep-env KEY also drops KEY from env.set, so the flag takes
// effect (set would win); --env wins over both. --seccomp replaces the
// profile's policy whole (its audit setting stays), looked up where Load
// found the profile; --seccomp-audit turns audit on. Every bad value is
// reported, each naming its flag; on error p is unchanged.
func (p *Profile) Apply(o Overrides) error {
	q := p.clone()
	a := applier{p: q, cwd0: o.Cwd0}
	if o.Workspace != "" {
		a.workspace(o.Workspace)
	}
	for _, v := range o.Binds {
		a.bind("--bind", "bind", v)
	}
	for _, v := range o.ROBinds {
		a.bind("--ro-bind", "ro-bind", v)
	}
	for _, v := range o.Tmpfs {
		a.tmpfs(v)
	}
	for _, k := range o.KeepEnv {
		if a.check("--keep-env", k, checkEnvName(k)) {
			q.keepEnv(k)
			delete(q.Env.Set, k)
		}
	}
	for _, v := range o.Env {
		k, val, ok := strings.Cut(v, "=")
		if !ok {
			a.fail("--env", v, errors.New("want KEY=VALUE"))
		} else if a.check("--env", v, errors.Join(checkEnvName(k), checkEnvValue(val))) {
			q.Env.Set[k] = val
		}
	}
	if o.Cwd != "" {
		cwd := o.Cwd
		if strings.HasPrefix(cwd, "/") {
			cwd = filepath.Clean(cwd)
		}
		if a.check("--cwd", o.Cwd, checkJailPath(cwd, true)) {
			q.Cwd = cwd
		}
	}
	if o.Hostname != "" && a.check("--hostname", o.Hostname, checkHostname(o.Hostname)) {
		q.Hostname = o.Hostname
	}
	a.errs = append(a.errs, o.unparsed...)
	a.limits(o)
	a.network(o)
	if o.Secrets != "" {
		if p, err := a.hostPath(o.Secrets); a.check("--secrets", o.Secrets, errors.Join(err, checkHostFile(p))) {
			a.p.Secrets.File = p
		}
	}
	for _, v := range o.Credentials {
		a.credential(v)
	}
	if o.AuditLog != "" {
		if p, err := a.hostPath(o.AuditLog); a.check("--audit-log", o.AuditLog, errors.Join(err, checkHostFile(p))) {
			a.p.AuditLog = p
		}
	}
	if o.Seccomp != "" {
		a.seccomp(o.Seccomp)
	}
	if o.SeccompAudit {
		q.Seccomp.Audit = true
	}
	if len(a.errs) > 0 {
		return errors.Join(a.errs...)
	}
	if err := q.check(); err != nil {
		return fmt.Errorf("profile %q with the given flags: %w", p.Name, err)
	}
	*p = *q
	return nil
}

// limits applies the limits; each is checked as its profile key is.
func (a *applier) limits(o Overrides) {
	l := &a.p.Limits
	if d := o.TimeLimit; d != nil && a.check("--time-limit", d.String(), nonNegative(*d)) {
		l.Time = *d
	}
	if n := o.Memory; n != nil && a.check("--memory", strconv.FormatUint(*n, 10), checkMemory(*n)) {
		l.Memory = new(*n)
	}
	if n := o.Pids; n != nil && a.check("--pids", strconv.FormatUint(*n, 10), checkPids(*n)) {
		l.Pids = new(*n)
	}
	if n := o.CPU; n != nil && a.check("--cpu", strconv.FormatFloat(*n, 'g', -1, 64), checkCores(*n)) {
		l.CPU = new(*n)
	}
	if n := o.MaxOutput; n != nil {
		l.MaxOutput = new(*n)
	}
	if n := o.Disk; n != nil && a.check("--disk", strconv.FormatUint(*n, 10), checkDisk(*n)) {
		l.Disk = new(*n)
	}
	if m := string(o.LimitsMode); m != "" && a.check("--limits-mode", m, checkLimitsMode(m)) {
		l.Mode = m
	}
}

// nonNegative refuses a negative time limit.
func nonNegative(d time.Duration) error {
	if d < 0 {
		return errNegative
	}
	return nil
}

// checkCores wants a CPU quota parseCores would give: 0 is none.
func checkCores(n float64) error {
	if n == 0 {
		return nil
	}
	_, err := parseCores(n)
	return err
}

// network applies --network, --allow and --pin-host: the last two add to
// the profile's lists and mean the allowlist, so they cannot go with
// --network none or host.
func (a *applier) network(o Overrides) {
	n := &a.p.Network
	mode := string(o.Network)
	if mode != "" && a.check("--network", mode, checkNetworkMode(mode)) {
		n.Mode = mode
		if mode != networkAllowlist {
			n.Allow, n.Hosts = nil, nil
		}
	}
	extra := len(o.Allow) > 0 || len(o.PinHosts) > 0
	if extra && mode != "" && mode != networkAllowlist {
		a.fail("--network", mode, errors.New("--allow and --pin-host need --network allowlist"))
		return
	}
	for _, s := range o.Allow {
		if _, err := ParseAllow(s); a.check("--allow", s, err) && !slices.Contains(n.Allow, s) {
			n.Allow = append(n.Allow, s)
		}
	}
	for _, s := range o.PinHosts {
		name, addr, ok := strings.Cut(s, "=")
		err := errors.New("want NAME=ADDR")
		if ok {
			err = checkPin(name, addr)
		}
		if a.check("--pin-host", s, err) {
			if n.Hosts == nil {
				n.Hosts = map[string]string{}
			}
			n.Hosts[strings.ToLower(name)] = addr
		}
	}
	if extra {
		n.Mode = networkAllowlist
	}
}

// applier collects one Apply's changes and errors.
type applier struct {
	p    *Profile
	cwd0 string
	errs []error
}

func (a *applier) fail(flag, value string, err error) {
	a.errs = append(a.errs, flagError(flag, value, err))
}

// flagError names the flag and its value: --memory "lots": want bytes ...
func flagError(flag, value string, err error) error {
	return fmt.Errorf("%s %q: %w", flag, value, err)
}

// check records err, if any, and says whether the value is good.
func (a *applier) check(flag, value string, err error) bool {
	if err != nil {
		a.fail(flag, value, err)
	}
	return err == nil
}

// hostPath makes a host path from a flag absolute and clean, as a shell user
// expects ("../data", "dir/"); "~/..." is left for Config, which knows the
// caller's HOME, and must already be clean.
func (a *applier) hostPath(path string) (string, error) {
	if strings.HasPrefix(path, "~") {
		return path, checkSrc(path)
	}
	if !filepath.IsAbs(path) {
		if !filepath.IsAbs(a.cwd0) {
			return "", fmt.Errorf("%q is relative and the working directory is not known", path)
		}
		path = filepath.Join(a.cwd0, path)
	}
	path = filepath.Clean(path)
	return path, checkSrc(path)
}

// workspace gives the profile's workspace mounts their source, or adds one
// at /workspace when the profile has none.
func (a *applier) workspace(dir string) {
	src, err := a.hostPath(dir)
	if !a.check("--workspace", dir, err) {
		return
	}
	found := false
	for i := range a.p.Mounts {
		if a.p.Mounts[i].Type == workspaceType {
			a.p.Mounts[i].Src, found = src, true
		}
	}
	if !found {
		a.p.addMount(Mount{Type: workspaceType, Src: src, Dst: "/workspace"})
	}
}

// bind adds "SRC[:DST]" as a mount of type typ; DST defaults to SRC. A
// path holding ':' writes it "\:" (splitPaths).
func (a *applier) bind(flag, typ, v string) {
	parts := splitPaths(v)
	if len(parts) > 2 {
		a.fail(flag, v, fmt.Errorf(`want SRC or SRC:DST; write a ':' inside a path as \: (%s '/data/a\:b:/b')`, flag))
		return
	}
	srcArg, hasDst := parts[0], len(parts) == 2
	if srcArg == "" {
		// Not the working directory: an empty variable in a caller's
		// script must not open the directory it runs in.
		a.fail(flag, v, errors.New("source must not be empty"))
		return
	}
	src, err := a.hostPath(srcArg)
	if err != nil {
		a.fail(flag, v, fmt.Errorf("source: %w", err))
		return
	}
	dst := src
	if hasDst {
		dst = parts[1]
	} else if strings.HasPrefix(src, "~") {
		a.fail(flag, v, errors.New("give a destination for a source under ~: SRC:DST"))
		return
	}
	if strings.HasPrefix(dst, "/") {
		dst = filepath.Clean(dst)
	}
	if a.check(flag, v, wrapValue("destination", dst, checkJailPath(dst, false))) {
		a.p.addMount(Mount{Type: typ, Src: src, Dst: dst})
	}
}

// tmpfs adds "DST[:SIZE[:MODE]]" as a tmpfs mount; DST may hold "\:", as
// a bind's paths may.
func (a *applier) tmpfs(v string) {
	parts := splitPaths(v)
	if len(parts) > 3 {
		a.fail("--tmpfs", v, errors.New(`want DST[:SIZE[:MODE]]; write a ':' inside a path as \: (--tmpfs '/a\:b:64M')`))
		return
	}
	parts = append(parts, "", "")
	dst, sizeArg, modeArg := parts[0], parts[1], parts[2]
	if strings.HasPrefix(dst, "/") {
		dst = filepath.Clean(dst)
	}
	m := Mount{Type: "tmpfs", Dst: dst}
	ok := a.check("--tmpfs", v, checkJailPath(dst, false))
	if sizeArg != "" {
		size, err := parseTmpfsSize(sizeArg)
		ok = a.check("--tmpfs", v, wrapValue("size", sizeArg, err)) && ok
		m.Size = size
	}
	if modeArg != "" {
		mode, err := parseMode(modeArg)
		ok = a.check("--tmpfs", v, wrapValue("mode", modeArg, err)) && ok
		m.Mode = mode
	}
	if ok {
		a.p.addMount(m)
	}
}

// splitPaths cuts a flag's value at each ':' that is not escaped: "\:" is
// a ':' within a part and "\\" a backslash ("a\\:b" is "a\" and "b"); any
// other backslash is itself. Paths with a colon exist (a mount of a
// Windows share, a directory named for a time), and a second flag
// spelling (docker's --mount src=,dst=) would only move the problem to
// ',' and '='.
func splitPaths(v string) []string {
	var parts []string
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\' && i+1 < len(v) && (v[i+1] == ':' || v[i+1] == '\\'):
			i++
			b.WriteByte(v[i])
		case c == ':':
			parts = append(parts, b.String())
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	return append(parts, b.String())
}

// seccomp replaces the profile's policy by the one named, looked up where
// Load found the profile; the files it reads join the profile's.
func (a *applier) seccomp(name string) {
	if !a.check("--seccomp", name, checkPolicyRef(name)) {
		return
	}
	files := maps.Clone(a.p.Files) // p's own stay as they were should Apply fail
	policy, err := finder{opts: a.p.opts, files: files}.policy(name)
	if !a.check("--seccomp", name, err) {
		return
	}
	a.p.Seccomp = Seccomp{Policy: name, Audit: a.p.Seccomp.Audit, resolved: policy}
	a.p.Files = files
}

// wrapValue names a part of a flag's value in its error: size "lots": ...
func wrapValue(what, value string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %q: %w", what, value, err)
}
