package jail

import (
	"encoding/json"
	"time"

	"golang.org/x/sys/unix"
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

// Status is the --status-json record: one JSON object per run, for the
// caller (an agent platform) to learn exactly what happened. Fields are only
// ever added, never renamed.
type Status struct {
	Version    int    `json:"version"`
	ExitCode   int    `json:"exit_code"`
	Signal     int    `json:"signal"`
	SignalName string `json:"signal_name,omitempty"`
	TimedOut   bool   `json:"timed_out"`
	// The verdict: which limit ended or hurt the run.
	OOMKilled       bool `json:"oom_killed"`        // the cgroup's OOM killer ended a process
	PidsLimitHit    bool `json:"pids_limit_hit"`    // the process limit refused a fork
	CPUTimeExceeded bool `json:"cpu_time_exceeded"` // SIGXCPU (RLIMIT_CPU) killed the command
	FileTooLarge    bool `json:"file_too_large"`    // SIGXFSZ (RLIMIT_FSIZE) killed the command
	OutputTruncated bool `json:"output_truncated"`  // --max-output dropped some of stdout or stderr
	// Usage, as the run's cgroup counted it; nil when there was none or
	// the kernel does not tell.
	OOMKills        *int64 `json:"oom_kills,omitempty"`
	MemoryPeakBytes *int64 `json:"memory_peak_bytes,omitempty"`
	PidsPeak        *int64 `json:"pids_peak,omitempty"`
	CPUThrottled    *int64 `json:"cpu_throttled_periods,omitempty"`
	// OutputDropped is, with a cap, how many bytes of each stream went.
	OutputDropped *struct {
		Stdout uint64 `json:"stdout"`
		Stderr uint64 `json:"stderr"`
		// Undelivered: bytes the caller's end did not take (closed,
		// or not read for 5 s after the jail ended).
		Undelivered uint64 `json:"undelivered"`
	} `json:"output_dropped,omitempty"`
	// OutputClosed is, with a cap, which of the caller's ends was closed
	// while the command wrote to it: the command's next write then failed
	// (SIGPIPE), as it would have without jail.
	OutputClosed *struct {
		Stdout bool `json:"stdout"`
		Stderr bool `json:"stderr"`
	} `json:"output_closed,omitempty"`
	// Limits is what the run was held to, and by what.
	Limits      *limitsRecord `json:"limits,omitempty"`
	WallMS      float64       `json:"wall_ms"`
	SetupMS     float64       `json:"setup_ms"`
	UserCPUMS   float64       `json:"cpu_user_ms"`
	SystemCPUMS float64       `json:"cpu_system_ms"`
	// PlanCached: the run replayed a cached plan; Go did not start.
	PlanCached  bool   `json:"plan_cached"`
	Profile     string `json:"profile"`
	ProfileHash string `json:"profile_hash"`
	// Error is jail's own failure (exit 125) or why exec failed (126, 127).
	Error string `json:"error,omitempty"`
}

// NewStatus is the record of a run; res is nil when jail itself failed.
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
