package profiles

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want uint64
		ok   bool
	}{
		{int64(0), 0, true},
		{int64(1024), 1024, true},
		{"1024", 1024, true},
		{"512K", 512 << 10, true},
		{"256M", 256 << 20, true},
		{"256m", 256 << 20, true},
		{"1G", 1 << 30, true},
		{"2T", 2 << 40, true},
		// Every spelling of a unit is 1024-based, MB included.
		{"512Mi", 512 << 20, true},
		{"512MiB", 512 << 20, true},
		{"512MB", 512 << 20, true},
		{"512mb", 512 << 20, true},
		{"512mib", 512 << 20, true},
		{"512K", 512 << 10, true},
		{"512Ki", 512 << 10, true},
		{"512KB", 512 << 10, true},
		{"1GiB", 1 << 30, true},
		{"1Gi", 1 << 30, true},
		{"1GB", 1 << 30, true},
		{"3TiB", 3 << 40, true},
		{"1024B", 1024, true},
		{"1024b", 1024, true},
		// A decimal with a unit, exactly, rounded up to a whole byte.
		{"1.5G", 3 << 29, true},
		{"1.5GiB", 3 << 29, true},
		{"0.5K", 512, true},
		{"0.25M", 256 << 10, true},
		{"0.001K", 2, true},
		{"1.000000000000000001T", 1<<40 + 1, true},
		{"unlimited", unix.RLIM_INFINITY, true},
		{int64(-1), 0, false},
		{"", 0, false},
		{"K", 0, false},
		{"Mi", 0, false},
		{"B", 0, false},
		{"1.5", 0, false},
		{"1.5B", 0, false},
		{".5G", 0, false},
		{"5.G", 0, false},
		{"1.5.5G", 0, false},
		{"1,5G", 0, false},
		{"1e3", 0, false},
		{"1P", 0, false},
		{"1iB", 0, false},
		{"1KiBB", 0, false},
		{"1MIBS", 0, false},
		{"1G5", 0, false},
		{"1 G", 0, false},
		{"1.0000000000000000001G", 0, false},
		{"8Mb/s", 0, false},
		{" 1G", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{"9999999999999T", 0, false},
		{"8388608T", 0, false},
		{"8388607T", 8388607 << 40, true},
		{"99999999999999999999", 0, false},
		{"000000000000000000000000001K", 1024, true},
		{true, 0, false},
		{1.5, 0, false},
	} {
		got, err := parseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseSize(%#v) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestParseTmpfsSize(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want int64
		ok   bool
	}{
		{"256M", 256 << 20, true},
		{"256MiB", 256 << 20, true},
		{"0.5G", 512 << 20, true},
		{int64(4096), 4096, true},
		{int64(0), 0, false},
		{"0", 0, false},
		{"unlimited", 0, false},
		{int64(-5), 0, false},
	} {
		got, err := parseTmpfsSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseTmpfsSize(%#v) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for in, want := range map[uint64]string{
		0:                  "0",
		1000:               "1000",
		1024:               `"1K"`,
		1536:               "1536",
		256 << 20:          `"256M"`,
		1 << 30:            `"1G"`,
		3 << 40:            `"3T"`,
		unix.RLIM_INFINITY: `"unlimited"`,
	} {
		if got := formatSize(in); got != want {
			t.Errorf("formatSize(%d) = %s, want %s", in, got, want)
		}
	}
}

func TestParseCount(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want uint64
		ok   bool
	}{
		{int64(1024), 1024, true},
		{"unlimited", unix.RLIM_INFINITY, true},
		{"1024", 0, false},
		{int64(-1), 0, false},
	} {
		got, err := parseCount(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseCount(%#v) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestParseCPU(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want uint64
		ok   bool
	}{
		{"60s", 60, true},
		{"2m", 120, true},
		{"1500ms", 2, true}, // rounded up: a limit never grants less than asked
		{"1ns", 1, true},
		{"unlimited", unix.RLIM_INFINITY, true},
		{"0s", 0, false},
		{"-1s", 0, false},
		{int64(60), 0, false},
		{"60", 0, false},
	} {
		got, err := parseCPU(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseCPU(%#v) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestTime(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want time.Duration
		ok   bool
	}{
		{"10m", 10 * time.Minute, true},
		{"none", 0, true},
		{"0s", 0, true},
		{"1h30m", 90 * time.Minute, true},
		{"-1s", 0, false},
		{"10", 0, false},
		{int64(10), 0, false},
	} {
		got, err := parseTime(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseTime(%#v) = %v, %v; want %v, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	for in, want := range map[time.Duration]string{
		0:                       `"none"`,
		10 * time.Minute:        `"10m"`,
		time.Hour:               `"1h"`,
		90 * time.Minute:        `"1h30m"`,
		time.Hour + time.Second: `"1h0m1s"`,
		1500 * time.Millisecond: `"1.5s"`,
		500 * time.Millisecond:  `"500ms"`,
	} {
		got := formatTime(in)
		if got != want {
			t.Errorf("formatTime(%v) = %s, want %s", in, got, want)
		}
		if back, err := parseTime(got[1 : len(got)-1]); err != nil || back != in {
			t.Errorf("parseTime(formatTime(%v)) = %v, %v", in, back, err)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want uint32
		ok   bool
	}{
		{"0755", 0o755, true},
		{"755", 0o755, true},
		{"1777", 0o1777, true},
		{"01777", 0o1777, true},
		{int64(0o644), 0o644, true},
		{"0", 0, false},
		{"0000", 0, false},
		{int64(0), 0, false},
		{"0o755", 0, false},
		{"789", 0, false},
		{"17777", 0, false},
		{int64(0o10000), 0, false},
		{int64(-1), 0, false},
		{"", 0, false},
		{"rwx", 0, false},
		{true, 0, false},
	} {
		got, err := parseMode(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseMode(%#v) = %o, %v; want %o, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	if got := formatMode(0o755); got != `"0755"` {
		t.Errorf("formatMode(0o755) = %s", got)
	}
	if got := formatMode(0o1777); got != `"1777"` {
		t.Errorf("formatMode(0o1777) = %s", got)
	}
}
