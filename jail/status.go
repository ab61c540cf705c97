package jail

// The status record: its Go type, the contract every writer and reader of
// the record keeps, and the record Go writes when the runner never started.

import (
	"encoding/json"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/proxy"
)

// Result is how the command ended and what it cost.
type Result struct {
	ExitCode  int    // the command's status; 128+N for death by signal N
	Signal    int    // the signal that killed it, 0 if it exited
	ExecError string // why the command could not be exec'd (ExitCode 126 or 127)
	TimedOut  bool   // the wall-time limit killed the jail

	Wall      time.Duration // jail start to the command's end
	Setup     time.Duration // jail start to the command's exec
	UserCPU   time.Duration // every process of the jail, summed
	SystemCPU time.Duration
}

// SetupError is a failure to build the jail as asked: the command never ran.
type SetupError struct {
	Msg string
}

func (e *SetupError) Error() string { return e.Msg }

// Status is the status record: one JSON object per run that tells the
// caller (an agent platform) exactly what happened. It is a contract:
//
//   - The runner writes it (report.c's status_record, with the proxy's
//     network fields and Go's planned limits and secrets spliced in); Go
//     writes it only when jail fails before the runner starts (NewStatus).
//     --status-json, sandbox.Run and each audit log line carry it.
//   - Fields are only ever added, never renamed, retyped or given another
//     meaning (so Version is 1); a reader ignores fields it does not know.
//   - A field without omitempty is in every record. The others are absent
//     when their comment says. The record Go writes has only the former,
//     and Error; the runner's always has Limits, Network, JailCPUMS,
//     Seccomp, SeccompAudit, SeccompCompiled, Denied and UserNS too.
//   - Times are milliseconds (to the microsecond), sizes bytes.
//
// testscripts/status_golden_test.go runs jails that end every way and
// decodes each record strictly into this type, so the writers and the type
// cannot drift.
type Status struct {
	Version  int `json:"version"`   // 1
	ExitCode int `json:"exit_code"` // jail's exit status: the command's, 128+N for signal N, 125 jail's own failure
	Signal   int `json:"signal"`    // the signal that ended the command, 0 if it exited
	// SignalName is Signal's name ("SIGKILL"); absent when Signal is 0
	// (or has no name).
	SignalName string `json:"signal_name,omitempty"`

	// The verdict: which limit ended or hurt the run.
	TimedOut        bool `json:"timed_out"`         // the time limit killed the jail
	OOMKilled       bool `json:"oom_killed"`        // the cgroup's OOM killer ended a process
	PidsLimitHit    bool `json:"pids_limit_hit"`    // the process limit refused a fork
	CPUTimeExceeded bool `json:"cpu_time_exceeded"` // SIGXCPU (RLIMIT_CPU) killed the command
	FileTooLarge    bool `json:"file_too_large"`    // SIGXFSZ (RLIMIT_FSIZE) killed the command
	OutputTruncated bool `json:"output_truncated"`  // --max-output dropped some of stdout or stderr
	DiskLimitHit    bool `json:"disk_limit_hit"`    // the jail wrote more than limits.disk: jail killed it
	DiskReserveHit  bool `json:"disk_reserve_hit"`  // a writable bind's filesystem fell below its free-space reserve: jail killed the jail

	WallMS  float64 `json:"wall_ms"`  // jail start to the command's end
	SetupMS float64 `json:"setup_ms"` // jail start to the command's exec
	// CPU of every process of the jail: from its cgroup when it has one,
	// else the runner's children.
	UserCPUMS   float64 `json:"cpu_user_ms"`
	SystemCPUMS float64 `json:"cpu_system_ms"`

	// Usage, as the run's cgroup counted it: absent without a cgroup,
	// null (nil) when the kernel does not tell (pids.peak is 6.1+, ...).
	OOMKills        *int64 `json:"oom_kills,omitempty"`             // processes the OOM killer ended
	MemoryPeakBytes *int64 `json:"memory_peak_bytes,omitempty"`     // the most memory in use at once
	PidsPeak        *int64 `json:"pids_peak,omitempty"`             // the most processes at once
	CPUThrottled    *int64 `json:"cpu_throttled_periods,omitempty"` // CFS periods the cpu limit held it back

	// DiskWrittenBytes is what the jail's processes wrote to disk-backed
	// files (its writable binds), as /proc/PID/io counts it; absent for a
	// jail with no writable bind and no disk limit, or one that never ran.
	DiskWrittenBytes *uint64 `json:"disk_written_bytes,omitempty"`
	// SessionDiskBytes is what the session's workspace holds, as its
	// account says after the run (limits.session_disk); absent outside a
	// session with that limit.
	SessionDiskBytes *uint64 `json:"session_disk_bytes,omitempty"`

	// OutputDropped and OutputClosed are there when output is capped
	// (--max-output), else absent.
	OutputDropped *OutputDropped `json:"output_dropped,omitempty"`
	OutputClosed  *OutputClosed  `json:"output_closed,omitempty"`

	// Secrets names each key --secrets gave the command, its value always
	// "***"; absent without secrets.
	Secrets map[string]string `json:"secrets,omitempty"`
	// Credentials are the run's credential bindings (never a value or a
	// placeholder), and CredentialCA the SHA-256 ("sha256:HEX") of the
	// run's certificate authority that intercepted their hosts; absent
	// without bindings.
	Credentials  []CredentialBinding `json:"credentials,omitempty"`
	CredentialCA string              `json:"credential_ca,omitempty"`
	// CredentialUse is, per bound variable and host, the requests that
	// carried the real value and their body bytes each way;
	// CredentialMisuse, the placeholders jail saw sent to a host they are
	// not bound to (sent on unchanged). The helper's report: present with
	// bindings once it ran.
	CredentialUse    []CredentialUse    `json:"credential_use,omitempty"`
	CredentialMisuse []CredentialMisuse `json:"credential_misuse,omitempty"`

	// UserNS is who the jail is on the host, and the path jail took to
	// build it.
	UserNS *UserNS `json:"userns,omitempty"`
	// SessionKeyringInherited: the jail went on in the caller's session
	// keyring, not one of its own, because a seccomp filter outside jail
	// refuses keyctl and the profile allows it (session_keyring =
	// "best-effort"; the command's filter refuses the keyring's syscalls).
	// Said on stderr too. Only ever true; absent otherwise.
	SessionKeyringInherited bool `json:"session_keyring_inherited,omitempty"`

	// Limits is what the run was held to, and by what.
	Limits *LimitsRecord `json:"limits,omitempty"`

	// Network is the jail's network: "none", "allowlist" or "host".
	Network string `json:"network,omitempty"`
	// NetworkDenied and NetworkAllowed are the network helper's report:
	// lookups its resolver refused, connections and datagrams its proxy
	// and stack refused, and what they let through (both there, maybe
	// empty, with network "none" or "allowlist"; absent with "host").
	NetworkDenied  []HostDenial `json:"network_denied,omitempty"`
	NetworkAllowed []HostUse    `json:"network_allowed,omitempty"`
	// NetworkProxyFailed: the network helper could not serve, or ended
	// before the jail (it said why on stderr). Only ever true; absent
	// otherwise.
	NetworkProxyFailed bool `json:"network_proxy_failed,omitempty"`
	// NetworkReportIncomplete: the proxy's last report was cut or too long
	// to keep, so NetworkDenied and NetworkAllowed may miss the end of the
	// run. Only ever true; absent otherwise.
	NetworkReportIncomplete bool `json:"network_report_incomplete,omitempty"`

	// JailCPUMS is jail's own CPU, outside the jail's limits: answering
	// refused syscalls costs it, so a command that floods them shows here.
	JailCPUMS float64 `json:"jail_cpu_ms,omitempty"`

	// Seccomp is the policy's name, or "none" (no filter).
	Seccomp string `json:"seccomp,omitempty"`
	// SeccompReported is false when refused syscalls are answered in the
	// kernel and go unreported (the policy's report = false): Denied is
	// then empty whatever was refused. Absent (nil) otherwise.
	SeccompReported *bool `json:"seccomp_reported,omitempty"`
	// SeccompAudit: the filter let refused calls through, reporting each.
	SeccompAudit bool `json:"seccomp_audit,omitempty"`
	// SeccompCompiled: this run compiled its filter (the program cache
	// missed); never on a replayed plan.
	SeccompCompiled bool `json:"seccomp_compiled,omitempty"`
	// Denied is every syscall the filter refused (or, audited, let
	// through), once per syscall; empty when none was.
	Denied []SyscallDenial `json:"denied,omitempty"`

	// PlanCached: the run replayed a cached plan; Go did not start.
	PlanCached  bool   `json:"plan_cached"`
	Profile     string `json:"profile"`      // the profile's name as given; "" when none was loaded
	ProfileHash string `json:"profile_hash"` // sha256 of the resolved profile, hex; "" when none was resolved
	// Error is jail's own failure (exit 125) or why exec failed (126,
	// 127); absent otherwise.
	Error string `json:"error,omitempty"`
}

// UserNS is the jail's user namespace: the host ids its one id maps to,
// and the path jail took to build it, Why saying what decided it.
//
//   - "unprivileged": the jail maps just HostUID and opens its binds as it,
//     as any unprivileged user's jail is built. The caller is that user,
//     or root without CAP_SYS_ADMIN (a container's root, as a rule): its
//     jail is HostUID (user.host_uid, never 0), and a writable bind must
//     be HostUID's own, since nothing can be idmapped.
//   - "root": root with CAP_SYS_ADMIN; the runner cloned the binds for the
//     jail, idmapping the writable ones to their owners.
type UserNS struct {
	HostUID uint32 `json:"host_uid"`
	HostGID uint32 `json:"host_gid"`
	Path    string `json:"path"`
	Why     string `json:"why"`
}

// CredentialBinding is one bound variable, the hosts that received its
// real value, and the only header it went in ("" any).
type CredentialBinding struct {
	Env    string   `json:"env"`
	Hosts  []string `json:"hosts"`
	Header string   `json:"header,omitempty"`
}

// OutputDropped is how many bytes of each stream the cap dropped.
type OutputDropped struct {
	Stdout uint64 `json:"stdout"`
	Stderr uint64 `json:"stderr"`
	// Undelivered: bytes the caller's end did not take (closed, or not
	// read for 5 s after the jail ended).
	Undelivered uint64 `json:"undelivered"`
}

// OutputClosed is which of the caller's ends was closed while the command
// wrote to it: the command's next write then failed (SIGPIPE), as it would
// have without jail.
type OutputClosed struct {
	Stdout bool `json:"stdout"`
	Stderr bool `json:"stderr"`
}

// HostDenial is something the network helper refused, and why: a name its
// resolver would not answer (Kind "lookup", Port 0), a connection ("tcp")
// or a datagram ("udp"). The helper, which writes these entries, owns the
// type.
type HostDenial = proxy.HostDenial

// HostUse is a destination the allowlist proxy let through.
type HostUse = proxy.HostUse

// CredentialUse is what one binding carried to one host.
type CredentialUse = proxy.CredentialUse

// CredentialMisuse is a placeholder seen going to a host it is not bound to.
type CredentialMisuse = proxy.CredentialMisuse

// SyscallDenial is a syscall the filter refused.
type SyscallDenial struct {
	Syscall string `json:"syscall"` // its name, "?" when libseccomp has none
	Nr      int    `json:"nr"`      // its number on this architecture
	Count   uint64 `json:"count"`   // calls refused
	// Args are the first call's six arguments, in hex ("0x10000000").
	Args []string `json:"args"`
}

// NewStatus is the record Go writes itself: jailErr, when jail failed
// before the runner started (res is then nil), else what res says. It has
// only the fields every record has, and Error: the rest is the runner's to
// know.
func NewStatus(cfg *Config, res *Result, jailErr error) *Status {
	st := &Status{Version: 1}
	if cfg != nil {
		st.Profile = cfg.Profile
		st.ProfileHash = cfg.ProfileHash
	}
	if jailErr != nil {
		st.ExitCode = 125
		st.Error = jailErr.Error()
		return st
	}
	st.ExitCode = res.ExitCode
	st.Signal = res.Signal
	if res.Signal != 0 {
		st.SignalName = unix.SignalName(unix.Signal(res.Signal))
	}
	st.TimedOut = res.TimedOut
	st.WallMS = ms(res.Wall)
	st.SetupMS = ms(res.Setup)
	st.UserCPUMS = ms(res.UserCPU)
	st.SystemCPUMS = ms(res.SystemCPU)
	st.Error = res.ExecError
	return st
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// JSON is the record as one line.
func (s *Status) JSON() []byte {
	b, _ := json.Marshal(s) // plain fields: cannot fail
	return append(b, '\n')
}
