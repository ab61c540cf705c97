package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultParent(t *testing.T) {
	for _, tc := range []struct {
		v    Version
		euid int
		want string
	}{{V1, 0, "/jail"}, {V1, 1000, "/jail/user-1000"}, {V2, 0, "/jail"}, {V2, 1000, "/jail"}} {
		if got := DefaultParent(tc.v, tc.euid); got != tc.want {
			t.Errorf("DefaultParent(%v, %d) = %q, want %q", tc.v, tc.euid, got, tc.want)
		}
	}
}

// A v1 host whose hierarchies are plain directories: Place groups the
// controllers by hierarchy, and a co-mounted cpu,cpuacct is one directory.
func TestPlaceV1(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"memory", "pids", "cpu,cpuacct"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h := Host{Version: V1, V1: map[string]string{
		"memory": filepath.Join(root, "memory"), "pids": filepath.Join(root, "pids"),
		"cpu": filepath.Join(root, "cpu,cpuacct"), "cpuacct": filepath.Join(root, "cpu,cpuacct"),
	}}
	pl, err := Place(h, "", 0, Memory|Pids|CPU|CPUAcct)
	if err != nil {
		t.Fatal(err)
	}
	want := []Dir{
		{filepath.Join(root, "memory/jail"), Memory},
		{filepath.Join(root, "pids/jail"), Pids},
		{filepath.Join(root, "cpu,cpuacct/jail"), CPU | CPUAcct},
	}
	if len(pl.Dirs) != len(want) {
		t.Fatalf("dirs = %+v, want %+v", pl.Dirs, want)
	}
	for i := range want {
		if pl.Dirs[i] != want[i] {
			t.Errorf("dir %d = %+v, want %+v", i, pl.Dirs[i], want[i])
		}
	}

	// A limit whose controller is not mounted cannot be had.
	delete(h.V1, "pids")
	_, err = Place(h, "", 0, Memory|Pids)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no pids hierarchy") {
		t.Errorf("without pids: err = %v", err)
	}
	// cpuacct only measures: without it the run goes on.
	delete(h.V1, "cpuacct")
	h.V1["pids"] = filepath.Join(root, "pids")
	if _, err := Place(h, "", 0, Memory|Pids|CPUAcct); err != nil {
		t.Errorf("without cpuacct: %v", err)
	}
}

// An unprivileged caller needs its delegated parent to exist: root makes
// it, and the error says how.
func TestPlaceV1Unprivileged(t *testing.T) {
	root := t.TempDir()
	h := Host{Version: V1, V1: map[string]string{"memory": root}}
	_, err := Place(h, "", 1000, Memory)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "chown 1000 /sys/fs/cgroup/$c/jail/user-1000") {
		t.Errorf("err = %v", err)
	}
}

func TestPlaceNone(t *testing.T) {
	if _, err := Place(Host{}, "", 0, Memory); !errors.Is(err, ErrUnavailable) {
		t.Errorf("err = %v", err)
	}
}
