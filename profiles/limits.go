package profiles

// Limits: the cgroup limits (memory, pids, cpu), how strictly they are
// held, and the output cap: parsed, checked, printed and converted.

import (
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail"
)

var errCores = errors.New(`want a number of cores such as 1, 0.5 or 2.0, or "unlimited"`)

// parseCores reads a CPU quota in cores; "unlimited" is 0.
func parseCores(v any) (float64, error) {
	var n float64
	switch v := v.(type) {
	case int64:
		n = float64(v)
	case float64:
		n = v
	case string:
		if v == unlimited {
			return 0, nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, errCores
		}
		n = f
	default:
		return 0, errCores
	}
	if math.IsNaN(n) || n < 0.01 || n > 4096 {
		return 0, errors.New(`want at least 0.01 cores and at most 4096, or "unlimited"`)
	}
	return n, nil
}

// formatCores writes a CPU quota as a TOML value.
func formatCores(n float64) string {
	if n == 0 {
		return strconv.Quote(unlimited)
	}
	s := strconv.FormatFloat(n, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// checkMemory refuses memory limits no jail could start under.
func checkMemory(n uint64) error {
	if n < 4<<20 {
		return errors.New(`want at least 4M (the jail itself needs that), or "unlimited"`)
	}
	return nil
}

// checkPids refuses process limits no jail could start under: its PID 1
// and the command are two.
func checkPids(n uint64) error {
	if n < 4 {
		return errors.New(`want at least 4 (the jail's PID 1, the command, and jail's own start-up), or "unlimited"`)
	}
	if n != unix.RLIM_INFINITY && n > math.MaxInt32 {
		return errTooBig
	}
	return nil
}

func checkLimitsMode(s string) error {
	if s != limitsEnforce && s != limitsBestEffort {
		return fmt.Errorf("want %q (fail when the host cannot give the cgroup limits) or %q (run with rlimit stand-ins)", limitsEnforce, limitsBestEffort)
	}
	return nil
}

func checkOnPidsLimit(s string) error {
	if s != pidsKill && s != pidsRefuse {
		return fmt.Errorf("want %q (end the run when a fork is refused) or %q (the fork fails, the run goes on)", pidsKill, pidsRefuse)
	}
	return nil
}

// checkCgroupParent wants a clean absolute path in the cgroup hierarchy.
func checkCgroupParent(s string) error {
	if s == "" {
		return nil
	}
	if !strings.HasPrefix(s, "/") || path.Clean(s) != s || strings.ContainsAny(s, "\n\x00") {
		return errors.New(`want a clean absolute path in the cgroup hierarchy, such as "/jail"`)
	}
	return nil
}

// check validates limits held in memory, as decode would have.
func (l *Limits) check(add func(key string, err error)) {
	if l.Memory != nil {
		add("limits.memory", checkMemory(*l.Memory))
	}
	if l.Pids != nil {
		add("limits.pids", checkPids(*l.Pids))
	}
	if l.CPU != nil && *l.CPU != 0 {
		_, err := parseCores(*l.CPU)
		add("limits.cpu", err)
	}
	if l.Disk != nil {
		add("limits.disk", checkDisk(*l.Disk))
	}
	if l.SessionDisk != nil {
		add("limits.session_disk", checkDisk(*l.SessionDisk))
	}
	if l.Mode != "" {
		add("limits.mode", checkLimitsMode(l.Mode))
	}
	add("limits.cgroup_parent", checkCgroupParent(l.CgroupParent))
	if l.OnPidsLimit != "" {
		add("limits.on_pids_limit", checkOnPidsLimit(l.OnPidsLimit))
	}
}

// encodeCgroup writes the cgroup limits and the output cap; those not set
// are named in a comment, as rlimits are.
func (l *Limits) encodeCgroup(kv, str func(key, value string), b *strings.Builder) {
	var none []string
	if l.Memory != nil {
		kv("memory", formatSize(*l.Memory))
	} else {
		none = append(none, "memory")
	}
	if l.Pids != nil {
		kv("pids", formatCount(*l.Pids))
	} else {
		none = append(none, "pids")
	}
	if l.CPU != nil {
		kv("cpu", formatCores(*l.CPU))
	} else {
		none = append(none, "cpu")
	}
	if l.Mode != "" {
		str("mode", l.Mode)
	}
	if l.CgroupParent != "" {
		str("cgroup_parent", l.CgroupParent)
	}
	if l.OnPidsLimit != "" {
		str("on_pids_limit", l.OnPidsLimit)
	}
	if l.MaxOutput != nil {
		kv("max_output", formatSize(*l.MaxOutput))
	} else {
		none = append(none, "max_output")
	}
	l.encodeDisk(kv, &none)
	if len(none) > 0 {
		fmt.Fprintf(b, "# no limit: %s\n", strings.Join(none, ", "))
	}
	if l.DiskReserve == nil {
		b.WriteString(reserveDefault())
	}
}

// cgroupLimits converts the cgroup limits and the output cap for a run.
func (l *Limits) cgroupLimits() jail.Limits {
	var j jail.Limits
	if l.Memory != nil && *l.Memory != unix.RLIM_INFINITY {
		j.Memory = *l.Memory
	}
	if l.Pids != nil && *l.Pids != unix.RLIM_INFINITY {
		j.Pids = *l.Pids
	}
	if l.CPU != nil {
		j.CPU = *l.CPU
	}
	if l.MaxOutput != nil && *l.MaxOutput != unix.RLIM_INFINITY {
		j.MaxOutput = *l.MaxOutput
	}
	l.diskLimits(&j)
	j.BestEffort = l.Mode == limitsBestEffort
	j.CgroupParent = l.CgroupParent
	j.PidsRefuse = l.OnPidsLimit == pidsRefuse
	return j
}
