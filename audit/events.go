package audit

// The event kinds a run's record carries: each refusal or limit a run met
// is one, named as the record's field that says it, so an operator can
// count and filter them (jail audit summary; README "Audit log").

// The event kinds of a run.
const (
	EventSeccompDenied    = "seccomp_denied"    // the filter refused calls: denied
	EventNetworkDenied    = "network_denied"    // the network policy refused lookups or connections: network_denied
	EventCredentialMisuse = "credential_misuse" // a placeholder went to a host it is not bound to: credential_misuse
	EventTimedOut         = "timed_out"
	EventOOMKilled        = "oom_killed"
	EventPidsLimitHit     = "pids_limit_hit"
	EventCPUTimeExceeded  = "cpu_time_exceeded"
	EventFileTooLarge     = "file_too_large"
	EventDiskLimitHit     = "disk_limit_hit"
	EventDiskReserveHit   = "disk_reserve_hit"
	EventOutputTruncated  = "output_truncated"
	EventJailError        = "jail_error" // jail itself failed (125): error
)

// Events are the event kinds r carries, in the order above.
func (r Record) Events() []string {
	var out []string
	add := func(on bool, kind string) {
		if on {
			out = append(out, kind)
		}
	}
	add(len(r.Denied) > 0, EventSeccompDenied)
	add(len(r.NetworkDenied) > 0, EventNetworkDenied)
	add(len(r.CredentialMisuse) > 0, EventCredentialMisuse)
	add(r.TimedOut, EventTimedOut)
	add(r.OOMKilled, EventOOMKilled)
	add(r.PidsLimitHit, EventPidsLimitHit)
	add(r.CPUTimeExceeded, EventCPUTimeExceeded)
	add(r.FileTooLarge, EventFileTooLarge)
	add(r.DiskLimitHit, EventDiskLimitHit)
	add(r.DiskReserveHit, EventDiskReserveHit)
	add(r.OutputTruncated, EventOutputTruncated)
	add(r.ExitCode == 125, EventJailError)
	return out
}
