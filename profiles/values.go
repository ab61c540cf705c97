package profiles

// Values: the spellings a profile (and a flag) may use for sizes, counts,
// durations and modes, parsed strictly and printed back the same way.

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail"
)

const unlimited = "unlimited"

// sizeUnits is how a size may be written, for the messages: one base for
// every spelling (parseBytes says why).
const sizeUnits = `a number with K, M, G or T, also written Ki, KiB or KB, all 1024-based ("512M", "512MiB" and "512MB" are each 512 MiB; "1.5G")`

// The messages say what is expected, so a user can fix the value at once.
var (
	errSize     = errors.New(`want bytes (1048576), ` + sizeUnits + `, or "unlimited"`)
	errTmpfs    = errors.New(`want bytes (1048576) or ` + sizeUnits)
	errCount    = errors.New(`want a whole number or "unlimited"`)
	errCPU      = errors.New(`want a duration such as "60s" or "2m", or "unlimited"`)
	errTime     = errors.New(`want a duration such as "10m" or "90s", or "none"`)
	errNegative = errors.New("must not be negative")
	errTooBig   = errors.New("too large")
	errMode     = errors.New(`want an octal mode such as "0755" or 0o755`)
)

// parseSize reads an rlimit size: bytes as an integer or a string with a
// 1024-based suffix, or "unlimited" (unix.RLIM_INFINITY).
func parseSize(v any) (uint64, error) {
	if n, ok, err := parseLimit(v); ok {
		return n, err
	}
	if s, ok := v.(string); ok {
		n, err := parseBytes(s)
		return uint64(n), err
	}
	return 0, errSize
}

// parseLimit reads the spellings sizes and counts share: a whole number, or
// "unlimited" (unix.RLIM_INFINITY); ok is false for any other value.
func parseLimit(v any) (n uint64, ok bool, err error) {
	switch v := v.(type) {
	case int64:
		if v < 0 {
			return 0, true, errNegative
		}
		return uint64(v), true, nil
	case string:
		if v == unlimited {
			return unix.RLIM_INFINITY, true, nil
		}
	}
	return 0, false, nil
}

// parseCount reads an rlimit count: a whole number or "unlimited".
func parseCount(v any) (uint64, error) {
	if n, ok, err := parseLimit(v); ok {
		return n, err
	}
	return 0, errCount
}

// parseTmpfsSize reads a tmpfs size; 0 and "unlimited" are refused because
// the kernel takes both as "no limit", and /tmp must be bounded.
func parseTmpfsSize(v any) (int64, error) {
	var n int64
	switch v := v.(type) {
	case int64:
		n = v
	case string:
		var err error
		if n, err = parseBytes(v); err != nil {
			if errors.Is(err, errSize) {
				return 0, errTmpfs
			}
			return 0, err
		}
	default:
		return 0, errTmpfs
	}
	if n < 0 {
		return 0, errNegative
	}
	if n == 0 {
		return 0, errors.New("would mean no limit at all: leave size out for the kernel's default (half of RAM), or give a size")
	}
	return n, nil
}

// parseBytes reads a size: whole bytes ("1048576", "1024B"), or a number,
// whole or decimal, with a unit: K, M, G or T, alone or followed by "i",
// "B" or "iB", in any case ("512M", "512Mi", "512MiB", "512mb", "1.5G").
// Every unit is 1024-based, "MB" included: jail's "M" always was (as
// Docker's --memory 512m, systemd's MemoryMax=512M and tmpfs's size=512m
// are), and "MB" meaning 10^6 beside it would make "512M" and "512MB" two
// limits 5% apart that read alike; Kubernetes's "Mi" is the same size
// here. A decimal is rounded up to a whole byte: a limit never grants less
// than it says.
func parseBytes(s string) (int64, error) {
	num, unit := splitUnit(s)
	mult, ok := unitBytes(unit)
	whole, frac, dot := strings.Cut(num, ".")
	if !ok || !digitsOnly(whole) || dot && (!digitsOnly(frac) || mult == 1) {
		return 0, errSize
	}
	// No size needs more than 18 decimals (a byte of 1T is the 13th),
	// and none fits in more than 19 digits.
	if len(frac) > 18 {
		return 0, errSize
	}
	if len(strings.TrimLeft(whole, "0")) > 19 {
		return 0, errTooBig
	}
	// whole.frac × mult, exactly: (whole·10^k + frac) × mult / 10^k.
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
	n, _ := new(big.Int).SetString(whole+frac, 10) // cannot fail: digits only
	n.Mul(n, big.NewInt(mult))
	n, rem := n.QuoRem(n, scale, new(big.Int))
	if rem.Sign() > 0 {
		n.Add(n, big.NewInt(1))
	}
	if !n.IsInt64() {
		return 0, errTooBig
	}
	return n.Int64(), nil
}

// splitUnit cuts a size after its number: "1.5GiB" is "1.5" and "GiB".
func splitUnit(s string) (num, unit string) {
	i := strings.LastIndexAny(s, "0123456789.") + 1
	return s[:i], s[i:]
}

// unitBytes is what a unit multiplies by: none or "B" is bytes; K, M, G
// and T, alone or with "i", "B" or "iB" (any case), are 1024-based.
func unitBytes(unit string) (int64, bool) {
	u := strings.ToUpper(unit)
	if u == "" || u == "B" {
		return 1, true
	}
	shift := strings.IndexByte("KMGT", u[0])
	if shift < 0 {
		return 0, false
	}
	switch u[1:] {
	case "", "I", "B", "IB":
		return 1 << (10 * (shift + 1)), true
	}
	return 0, false
}

// digitsOnly says s is one or more ASCII digits.
func digitsOnly(s string) bool {
	return s != "" && strings.TrimLeft(s, "0123456789") == ""
}

// formatSize writes bytes as a TOML value: as jail.FormatBytes does (in the
// largest 1024-based unit that divides them), quoted when that has a unit
// ("512M"); "unlimited" for unix.RLIM_INFINITY.
func formatSize(n uint64) string {
	if n == unix.RLIM_INFINITY {
		return strconv.Quote(unlimited)
	}
	if s := jail.FormatBytes(n); s != strconv.FormatUint(n, 10) {
		return strconv.Quote(s)
	}
	return strconv.FormatUint(n, 10)
}

// formatCount writes a count as a TOML value.
func formatCount(n uint64) string {
	if n == unix.RLIM_INFINITY {
		return strconv.Quote(unlimited)
	}
	return strconv.FormatUint(n, 10)
}

// parseCPU reads RLIMIT_CPU as a duration rounded up to whole seconds.
// "0s" is refused: the kernel would kill the command at once, and a user who
// wrote it almost certainly meant "no limit", as "0s" means for time.
func parseCPU(v any) (uint64, error) {
	s, ok := v.(string)
	if !ok {
		return 0, errCPU
	}
	if s == unlimited {
		return unix.RLIM_INFINITY, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errCPU
	}
	if d < 0 {
		return 0, errNegative
	}
	if d == 0 {
		return 0, errors.New(`would kill the command at once: write "unlimited" for no CPU limit`)
	}
	return uint64((d + time.Second - 1) / time.Second), nil
}

// formatCPU writes CPU seconds as a TOML value.
func formatCPU(n uint64) string {
	if n == unix.RLIM_INFINITY {
		return strconv.Quote(unlimited)
	}
	return strconv.Quote(strconv.FormatUint(n, 10) + "s")
}

// parseTime reads the wall-time limit: a duration, or "none"/"0s" for none.
func parseTime(v any) (time.Duration, error) {
	s, ok := v.(string)
	if !ok {
		return 0, errTime
	}
	if s == "none" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errTime
	}
	if d < 0 {
		return 0, errNegative
	}
	return d, nil
}

// formatTime writes the wall-time limit as a TOML value, without the zero
// units Duration.String adds ("10m", not "10m0s").
func formatTime(d time.Duration) string {
	if d == 0 {
		return strconv.Quote("none")
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return strconv.Quote(s)
}

// parseMode reads permission bits: an octal string ("0755", "1777") or an
// integer. A mode of 0 is refused because the mount package reads 0 as "the
// default", which would silently grant more than asked.
func parseMode(v any) (uint32, error) {
	var n int64
	switch v := v.(type) {
	case int64:
		n = v
	case string:
		if v == "" || len(v) > 5 || strings.TrimLeft(v, "01234567") != "" {
			return 0, errMode
		}
		n, _ = strconv.ParseInt(v, 8, 64) // cannot fail: at most 5 octal digits
	default:
		return 0, errMode
	}
	if n == 0 {
		return 0, errors.New("would mean the default mode: leave mode out, or give the bits")
	}
	if n < 0 || n > 0o7777 {
		return 0, fmt.Errorf("%w, between 0001 and 7777", errMode)
	}
	return uint32(n), nil
}

// formatMode writes permission bits as an octal string, as ls and chmod do.
func formatMode(m uint32) string {
	return strconv.Quote(fmt.Sprintf("%04o", m))
}
