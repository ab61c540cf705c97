package profiles

// Flags: the command line's spelling of Overrides ("512M", "90s",
// "unlimited"), parsed by the rules of the profile keys they stand for.

import "strconv"

// Flags are the CLI's flags for one run: the limits as typed on the command
// line, the rest as Overrides has them. "" is a flag not given.
type Flags struct {
	Overrides
	TimeLimit string // --time-limit DURATION, or "none" or "0"
	Memory    string // --memory SIZE ("512M", "unlimited")
	Pids      string // --pids N (or "unlimited")
	CPU       string // --cpu CORES ("0.5", "unlimited")
	MaxOutput string // --max-output BYTES, per stream
}

// Parse reads the limits into f.Overrides and returns it. A value that
// does not parse is kept for Apply to report, in its place among the other
// flags' problems: a run reports every bad flag at once.
func (f Flags) Parse() Overrides {
	o := f.Overrides
	fail := func(flag, value string, err error) {
		o.unparsed = append(o.unparsed, flagError(flag, value, err))
	}
	if f.TimeLimit != "" {
		if d, err := parseTime(f.TimeLimit); err != nil {
			fail("--time-limit", f.TimeLimit, err)
		} else {
			o.TimeLimit = &d
		}
	}
	if f.Memory != "" {
		n, err := parseSize(f.Memory)
		if err == nil {
			err = checkMemory(n)
		}
		if err != nil {
			fail("--memory", f.Memory, err)
		} else {
			o.Memory = &n
		}
	}
	if f.Pids != "" {
		if n, err := parsePids(f.Pids); err != nil {
			fail("--pids", f.Pids, err)
		} else {
			o.Pids = &n
		}
	}
	if f.CPU != "" {
		if n, err := parseCores(f.CPU); err != nil {
			fail("--cpu", f.CPU, err)
		} else {
			o.CPU = &n
		}
	}
	if f.MaxOutput != "" {
		if n, err := parseSize(f.MaxOutput); err != nil {
			fail("--max-output", f.MaxOutput, err)
		} else {
			o.MaxOutput = &n
		}
	}
	return o
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
