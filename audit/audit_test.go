package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/sessions"
)

// The reader takes the runner's lines (the golden ones are in
// testscripts/status_golden_test.go), skips and counts a line cut short,
// and the summary counts verdicts and denials from the embedded record.
func TestReadSummarize(t *testing.T) {
	lines := `{"time":"2026-01-02T03:04:05.678Z","run_id":"0011223344556677","session":"s1","argv":["sh","-c","x"],"cwd":"/w","caller_uid":1000,"jail_version":"v1","version":1,"exit_code":137,"signal":9,"signal_name":"SIGKILL","timed_out":false,"oom_killed":true,"pids_limit_hit":false,"cpu_time_exceeded":false,"file_too_large":false,"output_truncated":true,"wall_ms":1.5,"setup_ms":1.000,"cpu_user_ms":0.000,"cpu_system_ms":0.000,"network":"allowlist","network_denied":[{"host":"x.test","port":443,"count":2,"reason":"not on the allowlist"}],"network_allowed":[],"seccomp":"default","seccomp_reported":false,"seccomp_audit":false,"seccomp_compiled":false,"denied":[{"syscall":"unshare","nr":272,"count":3,"args":["0x10000000","0x0","0x0","0x0","0x0","0x0"]}],"plan_cached":true,"profile":"default","profile_hash":"ab","a_field_added_later":1}
{"time":"2026-01-02T03:04:06.000Z","run_id":"8899aabbccddeeff","session":"","argv":["true"],"cwd":"/","caller_uid":0,"jail_version":"v1","version":1,"exit_code":125,"sig
{"time":"2020-01-01T00:00:00.000Z","run_id":"0000000000000000","session":"","argv":["true"],"cwd":"/","caller_uid":0,"jail_version":"v0","version":1,"exit_code":0}
{"time":"2026-01-02T03:05:00.000Z","kind":"sessions_gc","caller_uid":0,"jail_version":"v1","older_than":"24h0m0s","removed":["a","b"],"skipped":["c"],"failed":[{"id":"d","error":"permission denied"}]}
`
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Read(path, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil || l.Bad != 1 || len(l.Runs) != 1 || len(l.GC) != 1 || len(l.Lines) != 2 {
		t.Fatalf("read: %d runs, %d collections, %d lines, %d bad, %v; want 1, 1, 2, 1 (cut short), nil", len(l.Runs), len(l.GC), len(l.Lines), l.Bad, err)
	}
	if g := l.GC[0]; len(g.Removed) != 2 || g.Skipped[0] != "c" || g.Failed[0].ID != "d" || g.OlderThan != "24h0m0s" {
		t.Errorf("gc record: %+v", g)
	}
	r := l.Runs[0]
	if r.RunID != "0011223344556677" || r.Session != "s1" || r.CallerUID != 1000 || !r.OOMKilled || r.SignalName != "SIGKILL" ||
		r.NetworkDenied[0].Port != 443 || r.Denied[0].Nr != 272 {
		t.Errorf("fields: %+v", r)
	}
	if want := []byte(lines[:bytes.IndexByte([]byte(lines), '\n')]); r.Line() != string(want) {
		t.Errorf("Line() is not the line as logged: %s", r.Line())
	}
	var out bytes.Buffer
	Summarize(l).Print(&out)
	want := `runs: 1
verdicts:
  oom_killed               1
  output_truncated         1
  seccomp_unreported       1
events:
  network_denied           1
  oom_killed               1
  output_truncated         1
  seccomp_denied           1
denied syscalls:
  unshare                  3
denied hosts:
  x.test:443               2
sessions gc:
  removed                  2
  collections              1
  failed                   1
  skipped (in use)         1
`
	if out.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", out.String(), want)
	}
}

// A collection's line goes where a run's would: appended whole to a
// regular file of the caller's own, made 0600 when missing; never through
// a symlink (the log's directory may be the jail's writable bind's
// neighbour, README "Audit log").
func TestAppendGC(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	res := sessions.GCResult{Removed: []string{"old"}}
	for i := 0; i < 2; i++ {
		if err := Append(path, NewGCRecord(res, 48*time.Hour, "test")); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the log: %v, %v; want mode 0600", fi, err)
	}
	l, err := Read(path, time.Time{})
	if err != nil || len(l.GC) != 2 || l.GC[1].Removed[0] != "old" || l.GC[1].Skipped == nil || l.GC[1].Kind != KindSessionsGC {
		t.Fatalf("read back: %+v, %v", l, err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if err := Append(link, NewGCRecord(res, time.Hour, "test")); err == nil {
		t.Error("appended through a symlink")
	}
}
