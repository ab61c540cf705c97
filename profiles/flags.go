package profiles

// Flags: the command line's spelling of Overrides ("512M", "90s",
// "unlimited"), parsed by the rules of the profile keys they stand for.

import (
	"strconv"
	"time"
)

// Flags are the CLI's flags for one run: the limits as typed on the command
// line, the rest as Overrides has them. "" is a flag not given.
type Flags struct {
	Overrides
	TimeLimit string // --time-limit DURATION, or "none" or "0"
	Memory    string // --memory SIZE ("512M", "unlimited")
	Pids      string // --pids N (or "unlimited")
	CPU       string // --cpu CORES ("0.5", "unlimited")
	MaxOutput string // --max-output BYTES, per stream
	Disk      string // --disk SIZE ("4G", "unlimited")
}

// Parse reads the limits into f.Overrides and returns it. A value that
// does not parse is kept for Apply to report, in its place among the other
// flags' problems: a run reports every bad flag at once.
func (f Flags) Parse() Overrides {
	o := f.Overrides
	parseFlag(&o, &o.TimeLimit, "--time-limit", f.TimeLimit, func(s string) (time.Duration, error) { return parseTime(s) })
	parseFlag(&o, &o.Memory, "--memory", f.Memory, parseMemory)
	parseFlag(&o, &o.Pids, "--pids", f.Pids, parsePids)
	parseFlag(&o, &o.CPU, "--cpu", f.CPU, func(s string) (float64, error) { return parseCores(s) })
	parseFlag(&o, &o.MaxOutput, "--max-output", f.MaxOutput, func(s string) (uint64, error) { return parseSize(s) })
	parseFlag(&o, &o.Disk, "--disk", f.Disk, parseDisk)
	return o
}

// parseFlag sets *dst to the flag's value, parsed, if the flag was given;
// one that does not parse is kept in o for Apply.
func parseFlag[T any](o *Overrides, dst **T, flag, value string, parse func(string) (T, error)) {
	if value == "" {
		return
	}
	v, err := parse(value)
	if err != nil {
		o.unparsed = append(o.unparsed, flagError(flag, value, err))
		return
	}
	*dst = &v
}

// parseMemory reads --memory: a size, at least what a jail needs to start.
func parseMemory(s string) (uint64, error) {
	n, err := parseSize(s)
	if err == nil {
		err = checkMemory(n)
	}
	return n, err
}

// parsePids reads --pids: a whole number (a negative one is refused as
// such) or "unlimited", at least what a jail needs to start.
func parsePids(s string) (uint64, error) {
	n, err := parseCount(s)
	if v, perr := strconv.ParseInt(s, 10, 64); perr == nil {
		n, err = parseCount(v)
	}
	if err == nil {
		err = checkPids(n)
	}
	return n, err
}
