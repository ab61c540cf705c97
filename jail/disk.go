package jail

// The disk limits, planned: the bytes the jail may write to its writable
// binds (Limits.Disk) and the free space each filesystem holding one keeps
// (the reserve). The runner watches both while the jail runs
// (diskwatch.c); what can be refused before a run is refused here.

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/wire"
	"github.com/jail-sandbox/jail/mount"
	"github.com/jail-sandbox/jail/seccomp"
)

// The reserve when a profile names none: the smaller of the two, so a
// small filesystem (a 512M workspace) keeps 5% and a large one 1G.
const (
	DefaultDiskReserve        = 1 << 30
	DefaultDiskReservePercent = 5
)

// diskPlan is what the runner gets: the limit, the reserve (bytes, a
// percentage of each filesystem, or both: the smaller), and the writable
// binds whose filesystems it watches.
type diskPlan struct {
	limit   uint64
	reserve uint64
	percent uint32
	binds   []mount.Writable
	// session: the session's limit over its life and its directory,
	// where the runner keeps its account; 0 and "" outside sessions.
	session    uint64
	sessionDir string
	// inMemory are the writable binds on tmpfs or ramfs: writes there are
	// memory, which write_bytes does not count.
	inMemory []string
}

// planDisk checks the reserve against each filesystem a writable bind is
// on: one the filesystem could never keep is a profile to fix, not a run
// that fails at its first write.
func planDisk(l Limits, sessionDir string, binds []mount.Writable) (diskPlan, error) {
	d := diskPlan{limit: l.Disk, reserve: l.DiskReserve, percent: l.DiskReservePercent, binds: binds}
	if sessionDir != "" && l.SessionDisk != 0 {
		d.session, d.sessionDir = l.SessionDisk, sessionDir
	}
	// A kernel without task I/O accounting would count nothing: no run
	// with a disk limit there.
	if d.limit != 0 || d.session != 0 {
		if b, err := os.ReadFile("/proc/self/io"); err != nil || !strings.Contains(string(b), "\nwrite_bytes: ") {
			return d, fmt.Errorf("the disk limit cannot be counted here: /proc/self/io is not readable (a kernel without task I/O accounting?); " +
				"fix: run without limits.disk (--disk unlimited); the free-space reserve still holds")
		}
	}
	if d.reserve == 0 && d.percent == 0 {
		d.reserve, d.percent = DefaultDiskReserve, DefaultDiskReservePercent
	}
	for _, b := range binds {
		var st unix.Statfs_t
		if err := unix.Statfs(b.Src, &st); err != nil {
			return d, fmt.Errorf("writable bind %s on %s: the free-space reserve cannot be watched: statfs: %w", b.Src, b.Dst, err)
		}
		if st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC {
			d.inMemory = append(d.inMemory, b.Dst)
		}
		size := st.Blocks * uint64(st.Frsize)
		if r := d.reserveOf(size); r >= size {
			return d, fmt.Errorf("limits.disk_reserve %s is not less than the filesystem holding %s (%s, %s): lower the reserve",
				FormatBytes(r), b.Dst, b.Src, FormatBytes(size))
		}
	}
	return d, nil
}

// reserveOf is the free space a filesystem of size bytes keeps, as the
// runner computes it (diskwatch.c's reserve_of).
func (d diskPlan) reserveOf(size uint64) uint64 {
	r := d.reserve
	if d.percent != 0 {
		p := size / 100 * uint64(d.percent)
		if r == 0 || p < r {
			r = p
		}
	}
	return r
}

// describe is the reserve as the record and the messages say it.
func (d diskPlan) describe() string {
	switch {
	case d.reserve != 0 && d.percent != 0:
		return fmt.Sprintf("%s or %d%%, the smaller", FormatBytes(d.reserve), d.percent)
	case d.percent != 0:
		return fmt.Sprintf("%d%%", d.percent)
	}
	return FormatBytes(d.reserve)
}

// encode writes the plan's disk section, as runplan.c's decode_disk reads
// it: u64 limit, u64 reserve, u32 percent, strs of each writable bind's
// source and where the jail sees it, in turn, u64 the session's limit,
// str its directory.
func (d diskPlan) encode(w *wire.Writer) {
	w.U64(d.limit)
	w.U64(d.reserve)
	w.U32(d.percent)
	w.Strs(d.flat())
	w.U64(d.session)
	w.Str(d.sessionDir)
}

// flat is the writable binds as encode writes them.
func (d diskPlan) flat() []string {
	var s []string
	for _, b := range d.binds {
		s = append(s, b.Src, b.Dst)
	}
	return s
}

// The preallocation ioctls, _IOW('X', 40, 42 and 61, struct space_resv):
// x/sys/unix does not name them.
const (
	fsIocResvsp    = 0x40305828
	fsIocResvsp64  = 0x4030582a
	fsIocZeroRange = 0x4030583d
)

// ioctlExceptionsFit reports whether the preallocation ioctls can be
// refused in p: not where p allows ioctl by conditions (strict's bit
// patterns around TIOCSTI), which an exception cannot join (the filter has
// no rule order, seccomp/resolve.go).
func ioctlExceptionsFit(p *seccomp.Policy) bool {
	for _, r := range p.Rules {
		if slices.Contains(r.Names, "ioctl") && len(r.Conds) > 0 && (r.Action.Kind == seccomp.Allow || r.Action.Kind == seccomp.Log) {
			return false
		}
	}
	return true
}

// withFallocateRefused is the policy a jail with a writable bind gets:
// fallocate allocates blocks without writing them, so neither the disk
// limit's count nor, at a terabyte a call, the reserve's poll would see it
// coming. Its allocating modes fail with EOPNOTSUPP, as on a filesystem
// without it (glibc's posix_fallocate then writes, which is counted); a
// mode that frees space (PUNCH_HOLE) does what the policy said. A rule
// that allows every fallocate is narrowed to those modes, since the
// filter cannot make an exception to it (seccomp/resolve.go).
func withFallocateRefused(p *seccomp.Policy) *seccomp.Policy {
	punch := func(v uint64) []seccomp.Cond {
		return []seccomp.Cond{{Index: 1, Op: seccomp.MaskedEq, Mask: unix.FALLOC_FL_PUNCH_HOLE, Value: v}}
	}
	q := *p
	q.Rules = nil
	for _, r := range p.Rules {
		allows := r.Action.Kind == seccomp.Allow || r.Action.Kind == seccomp.Log
		if i := slices.Index(r.Names, "fallocate"); i >= 0 && len(r.Conds) == 0 && allows {
			r.Names = slices.Delete(slices.Clone(r.Names), i, i+1)
			if len(r.Names) > 0 {
				q.Rules = append(q.Rules, r)
			}
			q.Rules = append(q.Rules, seccomp.Rule{Names: []string{"fallocate"}, Action: r.Action, Conds: punch(unix.FALLOC_FL_PUNCH_HOLE), Comment: r.Comment})
			continue
		}
		q.Rules = append(q.Rules, r)
	}
	refuse := seccomp.Action{Kind: seccomp.Errno, Errno: int(unix.EOPNOTSUPP)}
	q.Rules = append(q.Rules, seccomp.Rule{
		Names:   []string{"fallocate"},
		Action:  refuse,
		Conds:   punch(0),
		Comment: "jail: fallocate allocates disk blocks no write accounts for, past the disk limit and the free-space reserve (punching holes, which frees space, passes)",
	})
	// The ioctls that are fallocate by another name (fs/ioctl.c's
	// ioctl_preallocate); the request is 32 bits wide to the kernel.
	for _, req := range []uint64{fsIocResvsp, fsIocResvsp64, fsIocZeroRange} {
		if !ioctlExceptionsFit(p) {
			break
		}
		q.Rules = append(q.Rules, seccomp.Rule{
			Names:   []string{"ioctl"},
			Action:  refuse,
			Conds:   []seccomp.Cond{{Index: 1, Op: seccomp.MaskedEq, Mask: 0xffffffff, Value: req}},
			Comment: "jail: FS_IOC_RESVSP, FS_IOC_RESVSP64 and FS_IOC_ZERO_RANGE allocate blocks as fallocate does",
		})
	}
	return &q
}

// recordDisk says in the record what holds the disk limits. A disk limit
// without a seccomp filter (or with one that only reports) would not see
// fallocate: enforce refuses it, best-effort says so.
func recordDisk(cfg Config, d diskPlan, ids hostIDs, rec *LimitsRecord) error {
	unfiltered := cfg.Seccomp == nil || cfg.Seccomp.None || cfg.SeccompAudit
	if len(d.binds) > 0 {
		rec.DiskReserve = d.describe()
		rec.Enforced = append(rec.Enforced, "disk_reserve (the free space of each writable bind's filesystem, polled every 10 ms)")
		if unfiltered {
			rec.NotEnforced = append(rec.NotEnforced, "disk_reserve against fallocate (no seccomp filter refuses it)")
		} else if !ioctlExceptionsFit(cfg.Seccomp) {
			rec.NotEnforced = append(rec.NotEnforced, fmt.Sprintf("disk limits against the preallocation ioctls (FS_IOC_RESVSP, FS_IOC_ZERO_RANGE): "+
				"policy %s allows ioctl by conditions an exception cannot join; the reserve still holds", cfg.Seccomp.Name))
		}
	}
	if d.session != 0 {
		rec.SessionDisk = d.session
		rec.Enforced = append(rec.Enforced, "session_disk (the session's account: its runs' writes added up, its workspace measured again past half the limit)")
	}
	if d.limit == 0 && d.session == 0 {
		return nil
	}
	if unfiltered && !cfg.Limits.BestEffort {
		return fmt.Errorf("disk limit %s: with no seccomp filter (or an audit-only one) fallocate allocates blocks no write counts; "+
			"fix: keep a seccomp policy, or let the run go on with what holds: --limits-mode best-effort", FormatBytes(max(d.limit, d.session)))
	}
	if d.limit != 0 {
		rec.Enforced = append(rec.Enforced, "disk (bytes the jail's processes write, read from /proc/PID/io every 10 ms: a kill after the fact)")
	}
	if len(d.inMemory) > 0 {
		rec.NotEnforced = append(rec.NotEnforced, fmt.Sprintf("disk limits in %s: tmpfs, whose writes are memory and not counted (its size and the reserve bound it)",
			strings.Join(d.inMemory, ", ")))
	}
	switch {
	case !ids.root:
		rec.NotEnforced = append(rec.NotEnforced, "disk limits, for a process that is not dumpable, until it ends (an unprivileged caller cannot read its count: "+
			"PR_SET_DUMPABLE 0, as ssh says, or an execute-only program); the reserve still holds")
	case !ids.ptrace:
		rec.NotEnforced = append(rec.NotEnforced, "disk limits, for each process of the jail, until it ends (root without CAP_SYS_PTRACE, "+
			"as in a container, cannot read the jail's counts while they run; add it: docker run --cap-add SYS_PTRACE); the reserve still holds")
	}
	if unfiltered {
		rec.NotEnforced = append(rec.NotEnforced, "disk limits against fallocate (no seccomp filter refuses it)")
	}
	return nil
}
