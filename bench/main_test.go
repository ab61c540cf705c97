package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeRoot builds a host tree under a temp dir: a merged-/usr layout (bin,
// sbin, lib, lib64 symlinks), a few /etc files, one of them a symlink.
func fakeRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"usr/bin", "usr/lib", "etc/ssl", "etc/ld.so.conf.d"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"etc/ld.so.cache", "etc/nsswitch.conf"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"bin":            "usr/bin",
		"lib":            "usr/lib",
		"lib64":          "usr/lib64", // dangling: still a symlink to recreate
		"etc/localtime":  "/usr/share/zoneinfo/Etc/UTC",
		"etc/os-release": "../usr/lib/os-release",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestBwrapArgs(t *testing.T) {
	root := fakeRoot(t)
	got, err := bwrapArgs(root, []string{"/bin/true", "x"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
		"--ro-bind", root + "/usr", "/usr",
		"--symlink", "usr/bin", "/bin",
		"--symlink", "usr/lib", "/lib",
		"--symlink", "usr/lib64", "/lib64",
		"--ro-bind", root + "/etc/ld.so.cache", "/etc/ld.so.cache",
		"--ro-bind", root + "/etc/ld.so.conf.d", "/etc/ld.so.conf.d",
		"--symlink", "/usr/share/zoneinfo/Etc/UTC", "/etc/localtime",
		"--ro-bind", root + "/etc/ssl", "/etc/ssl",
		"--ro-bind", root + "/etc/nsswitch.conf", "/etc/nsswitch.conf",
		"--symlink", "../usr/lib/os-release", "/etc/os-release",
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"/bin/true", "x",
	}
	if !slices.Equal(got, want) {
		t.Errorf("bwrapArgs:\n got %q\nwant %q", got, want)
	}
}

func TestBwrapArgsEmptyRoot(t *testing.T) {
	got, err := bwrapArgs(t.TempDir(), []string{"/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "/bin/true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("bwrapArgs on an empty root = %q, want %q", got, want)
	}
}

func TestShellQuote(t *testing.T) {
	got := shellQuote([]string{"/usr/bin/bwrap", "--ro-bind", "/a b", "/a b", "it's", "", "x=1"})
	want := `/usr/bin/bwrap --ro-bind '/a b' '/a b' 'it'\''s' '' x=1`
	if got != want {
		t.Errorf("shellQuote = %s, want %s", got, want)
	}
}

func newTestCaller(t *testing.T, timeout time.Duration) *caller {
	t.Helper()
	c, err := newCaller(timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestCallSucceeds(t *testing.T) {
	c := newTestCaller(t, 10*time.Second)
	d, err := c.call(launcher{Name: "true", Argv: []string{"/bin/true"}})
	if err != nil || d <= 0 {
		t.Fatalf("call(/bin/true) = %v, %v", d, err)
	}
}

func TestCallReportsFailure(t *testing.T) {
	c := newTestCaller(t, 10*time.Second)
	// A first call leaves stderr behind; the failing one must not show it.
	if _, err := c.call(launcher{Name: "noisy", Argv: []string{"/bin/sh", "-c", "echo stale >&2"}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.call(launcher{Name: "jail", Argv: []string{"/bin/sh", "-c", "echo boom >&2; exit 3"}})
	if err == nil {
		t.Fatal("call of a command exiting 3: no error")
	}
	msg := err.Error()
	for _, want := range []string{"jail failed", "exit status 3", "boom", `/bin/sh -c 'echo boom >&2; exit 3'`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not contain %q", msg, want)
		}
	}
	if strings.Contains(msg, "stale") {
		t.Errorf("error %q shows an earlier call's stderr", msg)
	}
}

func TestCallTimesOut(t *testing.T) {
	c := newTestCaller(t, 100*time.Millisecond)
	start := time.Now()
	_, err := c.call(launcher{Name: "slow", Argv: []string{"/bin/sh", "-c", "sleep 30; true"}})
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("call of a 30 s command = %v, want a timeout", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("timeout took %v", took)
	}
}

func TestParseFlags(t *testing.T) {
	c, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.jail != "./jail" || c.runs != 50 || c.warmup != 10 || c.parallel != 8 ||
		c.duration != 3*time.Second || c.timeout != 10*time.Second ||
		c.downloadMB != 100 || c.netRuns != 5 || c.httpsRuns != 20 {
		t.Errorf("defaults = %+v", c)
	}
	for _, args := range [][]string{{"-n", "29"}, {"-parallel", "0"}, {"-duration", "0s"}, {"extra"},
		{"-download-mb", "0"}, {"-net-runs", "0"}, {"-https-runs", "0"}} {
		if _, err := parseFlags(args); err == nil {
			t.Errorf("parseFlags(%q): no error", args)
		}
	}
}

func TestResolveExe(t *testing.T) {
	dir := t.TempDir()
	if _, err := resolveExe(dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("resolveExe(a directory) = %v", err)
	}
	if _, err := resolveExe(filepath.Join(dir, "missing")); err == nil {
		t.Error("resolveExe(a missing file): no error")
	}
	if got, err := resolveExe("sh"); err != nil || !filepath.IsAbs(got) {
		t.Errorf(`resolveExe("sh") = %q, %v`, got, err)
	}
}

// TestRunWithStandIn runs the whole bench, briefly, with the stand-in jail
// script; it needs a working bwrap. The stand-in has no resolver for the
// bench's pinned name, so the network figures through it fail: named, and
// everything else still measured and written.
func TestRunWithStandIn(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real sandboxes")
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bwrap not on PATH")
	}
	if out, err := exec.Command(bwrap, "--unshare-all", "--ro-bind", "/", "/", "/bin/true").CombinedOutput(); err != nil {
		t.Skipf("bwrap cannot run here: %v: %s", err, out)
	}
	jsonPath := filepath.Join(t.TempDir(), "bench.json")
	cfg := config{
		jail: "testdata/fakejail", runs: minRuns, warmup: 1, parallel: 2,
		duration: 100 * time.Millisecond, timeout: 10 * time.Second, jsonPath: jsonPath,
		downloadMB: 1, netRuns: 1, httpsRuns: 1,
	}
	var out bytes.Buffer
	if err := run(cfg, &out); !errors.Is(err, errFigures) {
		t.Fatalf("run = %v, want the stand-in's network figures failed\n%s", err, out.String())
	}
	for _, want := range []string{"kernel", "fakejail (stand-in", "ratio jail/bwrap of the medians", "ratio jail/bwrap of calls/s", "--unshare-all",
		"ratio jail-allowlist/jail of calls/s", "jail-stack     FAILED", "jail-intercept FAILED", "jail-uncached  FAILED", "figures that could not be measured:", "download (jail-stack): exit status 6"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	var rep Report
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if n := rep.Latency.Stats["jail"].Runs; n != minRuns {
		t.Errorf("JSON: jail runs = %d, want %d", n, minRuns)
	}
	if len(rep.Latency.SamplesMs["bwrap"]) != minRuns || rep.Throughput.JailBwrapRatio <= 0 {
		t.Errorf("JSON figures missing: %s", b)
	}
	d, h := rep.Network.Download, rep.Network.HTTPS
	if len(d.Paths) != 2 || len(d.Paths[0].Samples) != 1 || d.Paths[0].Median <= 0 || d.Paths[1].Error == "" ||
		len(h.Paths) != 4 || len(h.Paths[0].Samples) != 1 || h.Paths[1].Error == "" || h.Paths[3].Error == "" || len(rep.Failed) != 4 {
		t.Errorf("JSON network figures: %+v, failed %q", rep.Network, rep.Failed)
	}
}
