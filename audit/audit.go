// Package audit reads the audit log jail appends one JSON line per run to
// (--audit-log; the runner writes it): the last runs, and a summary.
package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/jail"
)

// Record is one run's line: who ran what, where and when, then the run's
// status record (the runner writes both, audit_line in jail/report.c).
type Record struct {
	Time        time.Time `json:"time"`   // when the run ended, UTC, to the millisecond
	RunID       string    `json:"run_id"` // 16 hex digits, random
	Session     string    `json:"session"`
	Argv        []string  `json:"argv"`
	Cwd         string    `json:"cwd"` // jail's, on the host
	CallerUID   uint32    `json:"caller_uid"`
	JailVersion string    `json:"jail_version"`
	jail.Status
	raw string
}

// Line is the record as it was logged (JSON, promoted from Status, is
// the status record alone, re-encoded).
func (r Record) Line() string { return r.raw }

// Read reads the records at or after since, and counts the lines that are
// not records (a record cut short by a full disk): they are skipped.
func Read(path string, since time.Time) ([]Record, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var out []Record
	bad := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			bad++
			continue
		}
		if r.Time.Before(since) {
			continue
		}
		r.raw = sc.Text()
		out = append(out, r)
	}
	return out, bad, sc.Err()
}

// Summary counts runs by verdict and the most denied syscalls and hosts.
type Summary struct {
	Runs     int
	Verdicts map[string]int
	Syscalls map[string]int
	Hosts    map[string]int
}

// Summarize counts recs.
func Summarize(recs []Record) Summary {
	s := Summary{Runs: len(recs), Verdicts: map[string]int{}, Syscalls: map[string]int{}, Hosts: map[string]int{}}
	for _, r := range recs {
		v := "ok"
		switch {
		case r.ExitCode == 125:
			v = "jail_error"
		case r.TimedOut:
			v = "timed_out"
		case r.OOMKilled:
			v = "oom_killed"
		case r.PidsLimitHit:
			v = "pids_limit_hit"
		case r.CPUTimeExceeded:
			v = "cpu_time_exceeded"
		case r.FileTooLarge:
			v = "file_too_large"
		case r.ExitCode != 0:
			v = "nonzero_exit"
		}
		s.Verdicts[v]++
		if r.OutputTruncated {
			s.Verdicts["output_truncated"]++
		}
		if r.SeccompReported != nil && !*r.SeccompReported {
			s.Verdicts["seccomp_unreported"]++
		}
		for _, d := range r.Denied {
			s.Syscalls[d.Syscall] += int(d.Count)
		}
		for _, d := range r.NetworkDenied {
			s.Hosts[fmt.Sprintf("%s:%d", d.Host, d.Port)] += d.Count
		}
	}
	return s
}

// Print writes the summary, most frequent first.
func (s Summary) Print(w io.Writer) {
	fmt.Fprintf(w, "runs: %d\n", s.Runs)
	for _, part := range []struct {
		title string
		m     map[string]int
	}{{"verdicts", s.Verdicts}, {"denied syscalls", s.Syscalls}, {"denied hosts", s.Hosts}} {
		fmt.Fprintf(w, "%s:\n", part.title)
		for _, k := range top(part.m, 10) {
			fmt.Fprintf(w, "  %-24s %d\n", k, part.m[k])
		}
	}
}

func top(m map[string]int, n int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return strings.Compare(keys[i], keys[j]) < 0
	})
	if len(keys) > n {
		keys = keys[:n]
	}
	return keys
}
