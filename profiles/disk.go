package profiles

// The disk limits: how much a run may write to its writable binds
// (limits.disk, --disk) and the free space every filesystem holding one
// keeps (limits.disk_reserve): parsed, checked, printed and converted.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail"
)

// Reserve is limits.disk_reserve: bytes, or a percentage of the
// filesystem's size; exactly one is set.
type Reserve struct {
	Bytes   uint64
	Percent uint32
}

var errReserve = errors.New(`want free space to keep: bytes (1073741824), ` + sizeUnits + `, or a percentage of the filesystem such as "5%"`)

// checkDisk refuses a disk limit of 0: a run that may write nothing is
// better had with read-only binds, and 0 is more likely a slip for
// "unlimited".
func checkDisk(n uint64) error {
	if n == 0 {
		return errors.New(`want a size above 0 such as "4G" (for no writes, bind read-only; for no limit, "unlimited")`)
	}
	return nil
}

// parseDisk reads --disk: a size above 0, or "unlimited".
func parseDisk(s string) (uint64, error) {
	n, err := parseSize(s)
	if v, perr := strconv.ParseInt(s, 10, 64); perr == nil {
		n, err = parseSize(v)
	}
	if err == nil {
		err = checkDisk(n)
	}
	return n, err
}

// parseReserve reads limits.disk_reserve. The guard cannot be turned off:
// it is what keeps any jail from filling the host's disk.
func parseReserve(v any) (Reserve, error) {
	if s, ok := v.(string); ok && strings.HasSuffix(s, "%") {
		p, err := strconv.ParseUint(strings.TrimSuffix(s, "%"), 10, 32)
		if err != nil || p < 1 || p > 90 {
			return Reserve{}, errors.New(`want a whole percentage from 1% to 90% of the filesystem, such as "5%"`)
		}
		return Reserve{Percent: uint32(p)}, nil
	}
	if s, ok := v.(string); ok && s == unlimited {
		return Reserve{}, errReserve
	}
	n, err := parseSize(v)
	if err != nil {
		return Reserve{}, errReserve
	}
	if n == 0 {
		return Reserve{}, errors.New(`the free-space reserve cannot be turned off: want a size such as "256M" or a percentage such as "1%"`)
	}
	return Reserve{Bytes: n}, nil
}

// String writes the reserve as a TOML value.
func (r Reserve) String() string {
	if r.Percent != 0 {
		return strconv.Quote(fmt.Sprintf("%d%%", r.Percent))
	}
	return formatSize(r.Bytes)
}

// encodeDisk writes the disk limit and the reserve; the limit is named in
// the "no limit" comment when unset, the reserve's default is spelled out.
func (l *Limits) encodeDisk(kv func(key, value string), none *[]string) {
	if l.Disk != nil {
		kv("disk", formatSize(*l.Disk))
	} else {
		*none = append(*none, "disk")
	}
	if l.DiskReserve != nil {
		kv("disk_reserve", l.DiskReserve.String())
	}
	if l.SessionDisk != nil {
		kv("session_disk", formatSize(*l.SessionDisk))
	} else {
		*none = append(*none, "session_disk")
	}
}

// reserveDefault is the comment encode writes for a reserve not set.
func reserveDefault() string {
	return fmt.Sprintf("# disk_reserve not set: %s or %d%% of each writable bind's filesystem, the smaller\n",
		jail.FormatBytes(jail.DefaultDiskReserve), jail.DefaultDiskReservePercent)
}

// diskLimits converts the disk limit and the reserve for a run; a reserve
// not set stays 0, for jail to apply its default.
func (l *Limits) diskLimits(j *jail.Limits) {
	if l.Disk != nil && *l.Disk != unix.RLIM_INFINITY {
		j.Disk = *l.Disk
	}
	if l.SessionDisk != nil && *l.SessionDisk != unix.RLIM_INFINITY {
		j.SessionDisk = *l.SessionDisk
	}
	if r := l.DiskReserve; r != nil {
		j.DiskReserve, j.DiskReservePercent = r.Bytes, r.Percent
	}
}
