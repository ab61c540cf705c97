// Package jail runs one command in one fresh jail. The Go side plans a run
// (plan.go: a Config resolved against the host); the rest is C that runs as
// a constructor before the Go runtime: the runner (runner.c) is jail's own
// process from then on: it starts the init stage, writes its id maps, sends
// it the plan, forwards signals, enforces the wall-time limit and reports;
// the init stage (init.c, exec.c, pid1.c) is a fork of the runner, scrubbed
// (stagestart.c), that makes the new namespaces, builds the jail, execs the
// command and stays as PID 1.
// A plan cached by plancache is replayed by the runner without Go at all.
package jail

import (
	"time"

	"github.com/jail-sandbox/jail/mount"
	"github.com/jail-sandbox/jail/seccomp"
)

// Config is one run, fully resolved: everything the jail needs and nothing it
// has to look up. It is built by the profiles package and never changed after.
type Config struct {
	Profile     string // the profile's name, for the status record
	ProfileHash string // sha256 of the resolved profile, for the status record; set only when one is written

	Argv []string // the command; Argv[0] is looked up in the jail's PATH when it has no slash
	// Env and KeepEnv are the command's whole environment: the profile's
	// own KEY=value pairs, and the names of host variables passed through
	// when set (read when the jail starts, so a cached plan stays right).
	Env     []string
	KeepEnv []string
	Dir     string // working directory inside the jail

	Hostname   string
	NewSession bool // setsid: the command gets no controlling terminal
	// TTY is whether the command runs on a pty of the jail's own, relayed
	// to jail's terminal (README, "Interactive use"); the zero value is
	// never, as a library caller's streams are not a terminal.
	TTY TTYMode
	// KeyringBestEffort lets the jail go on in the caller's session
	// keyring where a seccomp filter outside jail refuses keyctl; NewPlan
	// allows it only when the command cannot use the keyring either.
	KeyringBestEffort bool

	// UID and GID are the command's ids inside the jail. Inside maps to the
	// caller's own ids when the caller is not root, and to HostUID/HostGID
	// (never 0) when it is.
	UID, GID         uint32
	HostUID, HostGID uint32

	Mounts  []mount.Spec
	Rlimits []Rlimit

	TimeLimit time.Duration // 0: none
	Limits    Limits
	// AuditLog is a file every run appends one JSON line to ("" none).
	AuditLog string
	// Session names the run's session, for the audit log.
	Session string
	// SessionDir is the session's directory (sessions.Session.Dir): its
	// workspace, and the account of what it holds (limits.session_disk).
	SessionDir string
	// SecretKeys are the variables of Env that came from a secrets file:
	// the record and the audit log name them, with "***" for the value.
	SecretKeys []string
	Network    Network

	// Seccomp is the syscall filter the command runs under: the profile's
	// resolved policy, its extends merged, groups not yet expanded (the
	// compiler does that). Never nil: profiles.Config fails rather than
	// return a Config without one; Seccomp.None is a profile's explicit
	// "none" (security invariant 4).
	Seccomp *seccomp.Policy
	// SeccompAudit lets through the calls the policy would deny and reports
	// each of them instead (--seccomp-audit, [seccomp] audit = true).
	SeccompAudit bool
	// SeccompQuiet: refused calls are answered by the kernel, unreported
	// (a jail that runs jails: one listener per filter tree).
	SeccompQuiet bool
}

// TTYMode is when a run gets a pty (Config.TTY).
type TTYMode int

// The tty modes. Auto is decided by the runner when the jail starts, not
// when it is planned: a cached plan serves calls from a terminal and from
// a pipe alike.
const (
	TTYOff  TTYMode = iota // never: the command gets jail's own streams
	TTYAuto                // when jail's stdin and stdout are terminals (the CLI's default)
	TTYOn                  // always: jail fails (125) when they are not
)

// Rlimit is one resource limit set on the command before exec.
type Rlimit struct {
	Resource int    // unix.RLIMIT_*
	Soft     uint64 // unix.RLIM_INFINITY for unlimited
	Hard     uint64
}

// Limits are the run's cgroup limits and its output cap. Zero is "none"
// for each.
type Limits struct {
	Memory    uint64  // bytes of memory for the whole jail; no swap
	Pids      uint64  // processes and threads at once
	CPU       float64 // cores
	MaxOutput uint64  // bytes each of stdout and stderr may carry
	// Disk bounds the bytes the jail's processes write to disk-backed
	// files (its writable binds: everything else is read-only or
	// memory); 0: none.
	Disk uint64
	// DiskReserve, or DiskReservePercent of the filesystem, is the free
	// space each filesystem holding a writable bind keeps: the run is
	// stopped before it falls below. Both 0: the smaller of 1G and 5%.
	DiskReserve        uint64
	DiskReservePercent uint32
	// SessionDisk bounds the bytes a session's workspace holds over its
	// life (Config.SessionDir's account); 0: none. Runs without a
	// session do not have it.
	SessionDisk uint64
	// BestEffort runs with rlimit stand-ins when the host cannot give the
	// cgroup limits, instead of failing.
	BestEffort bool
	// PidsRefuse: a fork the process limit refuses fails, and the run
	// goes on; otherwise jail ends the run.
	PidsRefuse bool
	// CgroupParent is where the run's cgroup goes, a path in the cgroup
	// hierarchy; "" for the default.
	CgroupParent string
}

// Cgroup reports whether the run asks for any cgroup limit.
func (l Limits) Cgroup() bool { return l.Memory != 0 || l.Pids != 0 || l.CPU != 0 }

// Network is the jail's network: Mode "none" (only loopback), "allowlist"
// (only loopback, and jail's proxy to the hosts on Allow) or "host" (the
// host's own network namespace).
type Network struct {
	Mode  string
	Allow []AllowEntry
	Hosts []Pin

	// Credentials are the bindings whose real values the network helper
	// puts into requests to their hosts; Env holds only the placeholders.
	Credentials []Credential
	// CACert and CAKey (DER, PKCS #8) are the run's certificate authority
	// for those hosts, CAFingerprint its SHA-256; none without bindings.
	CACert, CAKey []byte
	CAFingerprint string
	// UpstreamCA is PEM: roots the helper trusts, besides the system's,
	// for the intercepted hosts' servers (network.upstream_ca).
	UpstreamCA []byte
}

// Credential is one bound secret: the jail sees Placeholder; requests to
// Hosts (only header Header, when set) carry Value instead.
type Credential struct {
	Env         string
	Hosts       []string
	Header      string
	Placeholder string
	Value       string
}

// AllowEntry is one host the allowlist proxy lets the jail reach.
type AllowEntry struct {
	Host     string // a lower-case name, or an IP address when IP
	Wildcard bool   // "*.Host": any name below Host (not Host itself)
	IP       bool
	Port     uint16 // 0: the default ports, 80 and 443
}

// Pin is a name the proxy resolves to Addr without DNS.
type Pin struct {
	Name, Addr string
}
