// Package audit reads the audit log jail appends one JSON line per event
// to (--audit-log): a run's (the runner writes it) or a session
// collection's (jail sessions gc, gc.go); the last lines, and a summary.
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
	Kind        string    `json:"kind"`   // "run" (absent from logs older than the kinds)
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

// The kinds of line, the "kind" field.
const (
	KindRun        = "run"
	KindSessionsGC = "sessions_gc"
)

// Log is what Read found: the runs' records and the collections', every
// line of either in order, and how many lines were neither (a record cut
// short by a full disk), which are skipped.
type Log struct {
	Runs  []Record
	GC    []GCRecord
	Lines []string
	Bad   int
}

// Read reads the records at or after since.
func Read(path string, since time.Time) (Log, error) {
	var l Log
	f, err := os.Open(path)
	if err != nil {
		return l, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var head struct {
			Time time.Time `json:"time"`
			Kind string    `json:"kind"`
		}
		if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
			l.Bad++
			continue
		}
		if head.Time.Before(since) {
			continue
		}
		switch head.Kind {
		case KindSessionsGC:
			var g GCRecord
			if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
				l.Bad++
				continue
			}
			l.GC = append(l.GC, g)
		default:
			var r Record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				l.Bad++
				continue
			}
			r.raw = sc.Text()
			l.Runs = append(l.Runs, r)
		}
		l.Lines = append(l.Lines, sc.Text())
	}
	return l, sc.Err()
}

// Summary counts runs by verdict, the events of each kind (Events), the
// most denied syscalls and hosts, and what session collections did.
type Summary struct {
	Runs     int
	Verdicts map[string]int
	Events   map[string]int
	Syscalls map[string]int
	Hosts    map[string]int
	// GC: collections, and the sessions they removed, skipped (in use)
	// and failed to remove.
	GC map[string]int
}

// Summarize counts what l holds.
func Summarize(l Log) Summary {
	s := Summary{Runs: len(l.Runs), Verdicts: map[string]int{}, Events: map[string]int{}, Syscalls: map[string]int{},
		Hosts: map[string]int{}, GC: map[string]int{}}
	for _, g := range l.GC {
		s.GC["collections"]++
		s.GC["removed"] += len(g.Removed)
		s.GC["skipped (in use)"] += len(g.Skipped)
		s.GC["failed"] += len(g.Failed)
	}
	for _, r := range l.Runs {
		for _, e := range r.Events() {
			s.Events[e]++
		}
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
		case r.DiskLimitHit:
			v = "disk_limit_hit"
		case r.DiskReserveHit:
			v = "disk_reserve_hit"
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
	}{{"verdicts", s.Verdicts}, {"events", s.Events}, {"denied syscalls", s.Syscalls}, {"denied hosts", s.Hosts},
		{"sessions gc", s.GC}} {
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
