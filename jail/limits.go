package jail

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/cgroup"
)

// LimitsRecord is the status record's "limits": what the run was held to,
// and by what. Go plans it (planLimits) and the runner writes it as planned.
// A limit not asked for is absent.
type LimitsRecord struct {
	Cgroup    string  `json:"cgroup"`               // the run's cgroup: "v1", "v2" or "none"
	Memory    uint64  `json:"memory,omitempty"`     // bytes
	Pids      uint64  `json:"pids,omitempty"`       // processes
	CPU       float64 `json:"cpu,omitempty"`        // cores
	MaxOutput uint64  `json:"max_output,omitempty"` // bytes per stream
	// Disk is the bytes the jail may write to its writable binds;
	// DiskReserve the free space their filesystems keep ("1G or 5%, the
	// smaller"), absent without a writable bind.
	Disk        uint64 `json:"disk,omitempty"`
	DiskReserve string `json:"disk_reserve,omitempty"`
	// SessionDisk is the bytes the session's workspace may hold over its
	// life; absent outside sessions.
	SessionDisk uint64 `json:"session_disk,omitempty"`
	// Enforced names each limit that holds, and by what ("memory (cgroup
	// v2)", "pids (RLIMIT_NPROC, per jail)"); NotEnforced each asked for
	// that does not (best-effort). Both are there, maybe empty.
	Enforced    []string `json:"enforced"`
	NotEnforced []string `json:"not_enforced"`
	// Why says why the cgroup limits do not hold (best-effort on a host
	// that cannot give them); absent when they do.
	Why string `json:"why_not,omitempty"`
}

func cgroupLimits(l Limits) cgroup.Limits {
	return cgroup.Limits{Memory: l.Memory, Pids: l.Pids, CPU: l.CPU, PidsKill: !l.PidsRefuse}
}

// planLimits places the run's cgroup. When the host cannot give the
// cgroup limits the run fails, saying how to fix it, unless the profile
// said best-effort: then it gets rlimit stand-ins, RLIMIT_NPROC for the
// process limit (counted per user namespace, so per jail) and RLIMIT_AS
// for memory (per process, and of address space, so looser), and the
// record says which limits held and which did not.
func planLimits(cfg Config, ids hostIDs, disk diskPlan) (cgroup.Placement, []Rlimit, string, error) {
	l := cfg.Limits
	rec := LimitsRecord{Cgroup: "none", Memory: l.Memory, Pids: l.Pids, CPU: l.CPU, MaxOutput: l.MaxOutput,
		Disk: l.Disk, Enforced: []string{}, NotEnforced: []string{}}
	rlimits := cfg.Rlimits
	var place cgroup.Placement
	if l.Cgroup() {
		host, err := cgroup.Detect()
		if err == nil {
			place, err = cgroup.Place(host, l.CgroupParent, os.Geteuid(), cgroupLimits(l).Need())
		}
		noFilter := cfg.Seccomp != nil && (cfg.Seccomp.None || cfg.SeccompAudit)
		if err == nil && noFilter && host.LimitsOwnedByJail(os.Geteuid()) {
			// Without a filter (or one that only reports: audit) the
			// jail can make a user namespace, mount cgroupfs, and write
			// the limit files it owns.
			err = fmt.Errorf("%w: this caller's jail would own its cgroup's limit files, and with no seccomp filter (or an audit-only one) it could "+
				"mount cgroupfs and lift them; fix: keep a seccomp policy (one that refuses user namespaces, as default does), "+
				"run jail as root, or use cgroup v2 mounted with nsdelegate", cgroup.ErrUnavailable)
		}
		switch {
		case err == nil:
			rec.Cgroup = place.Version.String()
			if l.Memory != 0 && !host.SwapAccounted && swapOn() {
				rec.NotEnforced = append(rec.NotEnforced, "no swap (this kernel does not limit swap per cgroup: memory.swappiness 0 instead)")
			}
			for _, on := range []struct {
				name string
				set  bool
			}{{"memory", l.Memory != 0}, {"pids", l.Pids != 0}, {"cpu", l.CPU != 0}} {
				if on.set {
					rec.Enforced = append(rec.Enforced, on.name+" (cgroup "+rec.Cgroup+")")
				}
			}
		case !l.BestEffort || !errors.Is(err, cgroup.ErrUnavailable):
			return place, nil, "", fmt.Errorf("%s: %w (or let the run go on without them: --limits-mode best-effort)",
				describe(l), err)
		default:
			place = cgroup.Placement{}
			rec.Why = err.Error()
			if l.Pids != 0 {
				rlimits = withRlimit(rlimits, unix.RLIMIT_NPROC, l.Pids)
				rec.Enforced = append(rec.Enforced, "pids (RLIMIT_NPROC, per jail)")
			}
			if l.Memory != 0 {
				rlimits = withRlimit(rlimits, unix.RLIMIT_AS, l.Memory)
				rec.Enforced = append(rec.Enforced, "memory (RLIMIT_AS, per process: address space, not use)")
			}
			if l.CPU != 0 {
				rec.NotEnforced = append(rec.NotEnforced, "cpu")
			}
		}
	}
	if l.MaxOutput != 0 {
		rec.Enforced = append(rec.Enforced, "max_output")
	}
	if err := recordDisk(cfg, disk, ids, &rec); err != nil {
		return place, nil, "", err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return place, nil, "", err
	}
	return place, rlimits, string(b), nil
}

// swapOn reports whether the host has any swap in use.
func swapOn() bool {
	b, err := os.ReadFile("/proc/swaps")
	return err == nil && strings.Count(string(b), "\n") > 1
}

// withRlimit sets resource to n, or lowers it to n if the profile's own
// rlimit is higher.
func withRlimit(rl []Rlimit, resource int, n uint64) []Rlimit {
	out := append([]Rlimit(nil), rl...)
	for i, r := range out {
		if r.Resource == resource {
			out[i].Soft, out[i].Hard = min(r.Soft, n), min(r.Hard, n)
			return out
		}
	}
	return append(out, Rlimit{Resource: resource, Soft: n, Hard: n})
}

// describe names the cgroup limits asked for, for errors.
func describe(l Limits) string {
	var parts []string
	if l.Memory != 0 {
		parts = append(parts, "memory "+FormatBytes(l.Memory))
	}
	if l.Pids != 0 {
		parts = append(parts, fmt.Sprintf("pids %d", l.Pids))
	}
	if l.CPU != 0 {
		parts = append(parts, fmt.Sprintf("cpu %g", l.CPU))
	}
	return "cgroup limits (" + strings.Join(parts, ", ") + ")"
}

// FormatBytes writes n in the largest 1024-based unit that divides it, as
// profiles write sizes ("512M").
func FormatBytes(n uint64) string {
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return fmt.Sprintf("%d%s", n/u.mult, u.suffix)
		}
	}
	return fmt.Sprint(n)
}
