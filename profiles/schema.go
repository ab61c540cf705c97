// Package profiles turns a jail profile — a TOML file or one of the embedded
// built-ins — into the jail.Config of one run: it loads and resolves
// `extends`, validates strictly (every problem reported at once, with
// file:line:col and the key path), applies the command line's overrides and
// converts the result. It only reads files; it never touches the kernel.
package profiles

// The schema: the resolved profile's Go form and the table of keys each TOML
// table may hold, which the decoder, the encoder and the typo suggestions
// share so they cannot drift apart.

import (
	"io/fs"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/mount"
	"github.com/jail-sandbox/jail/seccomp"
	"github.com/jail-sandbox/jail/seccomp/policyfile"
)

// Profile is one resolved profile: its `extends` chain merged, every default
// filled in, so what Encode prints is exactly what the jail will do. The tags
// name each field's TOML key; Encode and Load implement the format (rlimits
// and modes have spellings the generic encoder cannot produce).
type Profile struct {
	Name string `toml:"-"` // as it was loaded: a name or a file path
	// Files are the profile files it came from, and the paths where one
	// was looked for and not found, as lstat saw them (nil: absent): a
	// cached plan stays right while they stay the same.
	Files       map[string]fs.FileInfo `toml:"-"`
	Description string                 `toml:"description"`
	Hostname    string                 `toml:"hostname"`
	// AuditLog is a file every run appends one JSON line to ("" none).
	AuditLog string `toml:"audit_log"`
	// Secrets names the file whose keys go into the command's
	// environment (secrets.Read); "" none.
	Secrets    Secrets `toml:"secrets"`
	Cwd        string  `toml:"cwd"`         // the command's working directory in the jail
	NewSession bool    `toml:"new_session"` // setsid, so the command cannot reach the caller's terminal (TIOCSTI)
	// SessionKeyring is what the jail does for a session keyring of its
	// own, so that the caller's keys are not reachable from it: "own"
	// (the default): it joins a new one, or the run fails; "best-effort":
	// where a seccomp filter outside jail refuses keyctl (Docker's
	// default profile), the jail goes on in the caller's, saying so on
	// stderr and in the record. jail.NewPlan allows that only when the
	// command's own filter refuses the keyring's syscalls and /proc/keys
	// is masked: the jail cannot use the keyring it stays in.
	SessionKeyring string `toml:"session_keyring"`

	User    User    `toml:"user"`
	Env     Env     `toml:"env"`
	Limits  Limits  `toml:"limits"`
	Network Network `toml:"network"`
	Seccomp Seccomp `toml:"seccomp"`
	Mounts  []Mount `toml:"mount"`
	// Credentials bind secrets of the secrets file to the hosts that
	// receive their real values; the jail sees placeholders.
	Credentials []Credential `toml:"credential"`

	// opts is where Load found the profile, so that Apply looks a
	// --seccomp policy up where Load would have.
	opts Options
}

// User says who the command is: its ids inside the jail, and which host ids
// the jail runs as when the caller is root (never root itself).
type User struct {
	UID     uint32 `toml:"uid"`
	GID     uint32 `toml:"gid"`
	Name    string `toml:"name"` // non-empty: /etc/passwd and /etc/group are generated for it
	HostUID uint32 `toml:"host_uid"`
	HostGID uint32 `toml:"host_gid"`
}

// Env is the command's whole environment: nothing from the host passes
// unless Keep names it.
type Env struct {
	Keep []string          `toml:"keep"` // host variables passed through when set
	Set  map[string]string `toml:"set"`  // wins over Keep
}

// Limits bounds the command. Memory, Pids and CPU are the run's cgroup
// limits; nil is none, and so is unlimited (unix.RLIM_INFINITY, or a CPU of
// 0), which a profile may write to lift an inherited one. A nil rlimit is not
// set: the command inherits the caller's. Sizes are bytes, CPU time is
// seconds, unix.RLIM_INFINITY is "unlimited".
type Limits struct {
	Time time.Duration `toml:"time"` // wall time; 0: none

	Memory *uint64  `toml:"memory"` // bytes of memory, and no swap
	Pids   *uint64  `toml:"pids"`   // processes and threads at once
	CPU    *float64 `toml:"cpu"`    // cores' worth of CPU time per period
	// Mode is what happens when the host cannot give the cgroup limits:
	// "enforce" (also ""): the run fails; "best-effort": the run goes on
	// with rlimit stand-ins and the status record says what held.
	Mode string `toml:"mode"`
	// CgroupParent is where run cgroups are made, as a path in the cgroup
	// hierarchy ("/jail"); "" is the default (cgroup.DefaultParent).
	CgroupParent string `toml:"cgroup_parent"`
	// OnPidsLimit is what a fork refused by the process limit does to the
	// run: "kill" (also ""): jail ends it, as a fork bomb is best ended;
	// "refuse": the fork fails with EAGAIN and the run goes on.
	OnPidsLimit string `toml:"on_pids_limit"`
	// MaxOutput caps each of stdout and stderr, in bytes; nil: no cap, and
	// the command writes to the caller's own files.
	MaxOutput *uint64 `toml:"max_output"`
	// Disk bounds the bytes a run may write to disk-backed files (its
	// writable binds), counted as written; nil: no limit.
	Disk *uint64 `toml:"disk"`
	// DiskReserve is the free space each filesystem holding a writable
	// bind keeps: a run is stopped before it falls below. nil: the
	// default, the smaller of 1G and 5% of the filesystem.
	DiskReserve *Reserve `toml:"disk_reserve"`
	// SessionDisk bounds what a session's workspace holds over its life,
	// its runs' writes added up and measured again now and then; only a
	// run with --session has it. nil: no limit.
	SessionDisk *uint64 `toml:"session_disk"`

	Core    *uint64 `toml:"core"`
	Nofile  *uint64 `toml:"nofile"`
	Nproc   *uint64 `toml:"nproc"`
	Fsize   *uint64 `toml:"fsize"`
	CPUTime *uint64 `toml:"cpu_time"`
	AS      *uint64 `toml:"as"`
	Stack   *uint64 `toml:"stack"`
}

// Session keyring modes.
const (
	keyringOwn        = "own"
	keyringBestEffort = "best-effort"
)

// Limit modes.
const (
	limitsEnforce    = "enforce"
	limitsBestEffort = "best-effort"

	pidsKill   = "kill"
	pidsRefuse = "refuse"
)

// Network says what network the jail has: "none" (only loopback),
// "allowlist" (only loopback, and jail's proxy to the names on Allow), or
// "host" (the host's network namespace).
type Network struct {
	Mode  string            `toml:"mode"`
	Allow []string          `toml:"allow"` // HOST[:PORT], *.DOMAIN[:PORT] or an IP
	Hosts map[string]string `toml:"hosts"` // names pinned to addresses, for the proxy
	// UpstreamCA is a PEM file of roots trusted, besides the system's, for
	// the servers of hosts intercepted for credential injection only.
	UpstreamCA string `toml:"upstream_ca"`
}

// Seccomp is the profile's [seccomp] table: the syscall filter the command
// runs under. Exactly one of Policy, Inline and OCI is set: a profile that
// says nothing gets Policy "default", and only Policy "none", said in so
// many words, means no filter (security invariant 4).
type Seccomp struct {
	Policy string          `toml:"policy"` // a named policy (jail seccomp list), or "none"
	Inline *seccomp.Policy `toml:"-"`      // rules written in the profile, their extends merged in; Name "inline"
	OCI    string          `toml:"oci"`    // an OCI (Docker) seccomp profile's absolute path, imported
	Audit  bool            `toml:"audit"`  // let denied calls through, reporting each
	// Quiet (report = false): refused calls are answered by the kernel,
	// not handed to jail and reported: for a jail that runs jails, since
	// a filter tree has room for one listener.
	Quiet bool `toml:"-"`
	// Warnings are what importing OCI skipped or changed (a syscall this
	// libseccomp does not know, ...): show prints them, a run should too.
	Warnings []string `toml:"-"`

	// resolved is what Policy or OCI names, as Load or Apply read it: the
	// files it came from are in the profile's Files. Never changed once
	// read, so clones share it.
	resolved *seccomp.Policy
}

// Mount is one entry of the profile's mount list: what to put where in the
// jail's root. Which fields apply depends on Type; the others stay zero.
type Mount struct {
	Type     string `toml:"type"`
	Src      string `toml:"src"` // bind, ro-bind; workspace once --workspace gave it
	Dst      string `toml:"dst"`
	Optional bool   `toml:"optional"`
	Size     int64  `toml:"size"` // tmpfs: bytes; 0 for the kernel's default
	Mode     uint32 `toml:"mode"` // tmpfs, dir, file: permission bits; 0 for the default
	Target   string `toml:"target"`
	Content  string `toml:"content"`
	// Unmasked (proc: masked = false) leaves the jail's procfs without
	// runc's masks: for a jail that runs jails (the kernel refuses a
	// fresh procfs under a masked one). The host's kernel command line
	// and interrupt counts become readable, /proc/sys is not read-only;
	// profile show says so.
	Unmasked bool `toml:"-"`
}

// The mount type that stands for the caller's workspace: the profile says
// where, --workspace says what.
const workspaceType = "workspace"

// mountType is what one `type = ...` allows and becomes.
type mountType struct {
	kind mount.Kind
	keys []string // the keys allowed besides type and dst
}

// mountTypes maps each `type = ...` to what it allows and becomes.
var mountTypes = map[string]mountType{
	"bind":        {mount.Bind, []string{"src", "optional"}},
	"ro-bind":     {mount.ReadOnlyBind, []string{"src", "optional"}},
	"tmpfs":       {mount.Tmpfs, []string{"size", "mode"}},
	"proc":        {mount.Proc, []string{"masked"}},
	"dev":         {mount.Dev, nil},
	"symlink":     {mount.Symlink, []string{"target"}},
	"dir":         {mount.Dir, []string{"mode"}},
	"file":        {mount.File, []string{"mode", "content"}},
	workspaceType: {mount.Bind, nil},
}

// mountTypeNames is mountTypes' keys in documentation order, for messages.
var mountTypeNames = []string{"bind", "ro-bind", "tmpfs", "proc", "dev", "symlink", "dir", "file", workspaceType}

// The keys each table may hold, for unknown-key errors and suggestions.
var (
	topKeys     = []string{"description", "extends", "hostname", "audit_log", "secrets", "cwd", "new_session", "session_keyring", "user", "env", "limits", "network", "seccomp", "mount", "credential"}
	userKeys    = []string{"uid", "gid", "name", "host_uid", "host_gid"}
	envKeys     = []string{"keep", "set"}
	networkKeys = []string{"mode", "allow", "hosts", "upstream_ca"}
	mountKeys   = []string{"type", "src", "dst", "optional", "size", "mode", "target", "content", "masked"}
	limitKeys   = []string{"time", "memory", "pids", "cpu", "mode", "cgroup_parent", "on_pids_limit", "max_output", "disk", "disk_reserve", "session_disk", "core", "nofile", "nproc", "fsize", "cpu_time", "as", "stack"}
	seccompKeys = []string{"policy", "oci", "audit", "report", "extends", "default", "rule"}
)

// limitKind says how an rlimit's value is written.
type limitKind int

const (
	sizeLimit  limitKind = iota // bytes: 1024, "512K", "1G", "unlimited"
	countLimit                  // a count: 1024, "unlimited"
	cpuLimit                    // seconds, written as a duration: "60s", "unlimited"
)

// rlimitKey is one rlimit a profile can set.
type rlimitKey struct {
	key      string
	resource int // unix.RLIMIT_*
	kind     limitKind
}

// rlimits lists the rlimit keys in encoding order.
var rlimits = []rlimitKey{
	{"core", unix.RLIMIT_CORE, sizeLimit},
	{"nofile", unix.RLIMIT_NOFILE, countLimit},
	{"nproc", unix.RLIMIT_NPROC, countLimit},
	{"fsize", unix.RLIMIT_FSIZE, sizeLimit},
	{"cpu_time", unix.RLIMIT_CPU, cpuLimit},
	{"as", unix.RLIMIT_AS, sizeLimit},
	{"stack", unix.RLIMIT_STACK, sizeLimit},
}

// rlimit returns the field holding the rlimit named key, so tables above can
// drive decoding, merging, encoding and conversion alike.
func (l *Limits) rlimit(key string) **uint64 {
	switch key {
	case "core":
		return &l.Core
	case "nofile":
		return &l.Nofile
	case "nproc":
		return &l.Nproc
	case "fsize":
		return &l.Fsize
	case "cpu_time":
		return &l.CPUTime
	case "as":
		return &l.AS
	case "stack":
		return &l.Stack
	}
	return nil
}

// defaults is what a profile that sets nothing gets: the values the CLI
// documents, none of them less isolated than the alternatives.
func defaults() Profile {
	return Profile{
		Hostname:   "jail",
		Cwd:        "/",
		NewSession: true,
		// The strict choice: a keyring of the jail's own, or no run.
		SessionKeyring: keyringOwn,
		User:           User{UID: 1000, GID: 1000, HostUID: 65534, HostGID: 65534},
		Env:            Env{Set: map[string]string{}},
		Network:        Network{Mode: networkNone},
		Seccomp:        Seccomp{Policy: policyfile.Default},
	}
}

// Clone returns a deep copy: for a program that loads a profile once and
// applies each run's overrides to a copy of its own.
func (p *Profile) Clone() *Profile { return p.clone() }

// clone returns a deep copy, so Apply can fail without changing p and a
// returned profile shares nothing with another.
func (p *Profile) clone() *Profile {
	c := *p
	c.Env.Keep = append([]string(nil), p.Env.Keep...)
	c.Env.Set = make(map[string]string, len(p.Env.Set))
	for k, v := range p.Env.Set {
		c.Env.Set[k] = v
	}
	for _, r := range rlimits {
		if v := *p.Limits.rlimit(r.key); v != nil {
			n := *v
			*c.Limits.rlimit(r.key) = &n
		}
	}
	c.Limits.Memory = cloneLimit(p.Limits.Memory)
	c.Limits.Pids = cloneLimit(p.Limits.Pids)
	c.Limits.CPU = cloneLimit(p.Limits.CPU)
	c.Limits.MaxOutput = cloneLimit(p.Limits.MaxOutput)
	c.Limits.Disk = cloneLimit(p.Limits.Disk)
	c.Limits.DiskReserve = cloneLimit(p.Limits.DiskReserve)
	c.Limits.SessionDisk = cloneLimit(p.Limits.SessionDisk)
	c.Network = p.Network.clone()
	c.Mounts = append([]Mount(nil), p.Mounts...)
	c.Credentials = cloneCredentials(p.Credentials)
	c.Seccomp.Inline = clonePolicy(p.Seccomp.Inline)
	c.Seccomp.Warnings = slices.Clone(p.Seccomp.Warnings)
	// resolved is shared: nothing changes it once read (Config hands out
	// a copy).
	return &c
}

// cloneLimit copies an optional limit, so clones share no pointer.
func cloneLimit[T any](v *T) *T {
	if v == nil {
		return nil
	}
	n := *v
	return &n
}

// Secrets is the [secrets] table.
type Secrets struct {
	File string `toml:"file"` // an absolute host path
}
