package main

import (
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// TestVersionText: the linker's values win; without them what Go stamped
// (go install's module version, -buildvcs's commit); without that,
// "devel" and "unknown" rather than a made-up release.
func TestVersionText(t *testing.T) {
	goLine := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	installed := &debug.BuildInfo{Main: debug.Module{Path: "github.com/jail-sandbox/jail", Version: "v1.2.3"}}
	for _, tc := range []struct {
		name, ver, rev string
		bi             *debug.BuildInfo
		want           string
	}{
		{"make", "v1.0.0-3-gdeadbee", "deadbeef", vcs, "jail v1.0.0-3-gdeadbee\ncommit deadbeef (modified)\n"},
		{"go build in a checkout", "", "", vcs, "jail devel\ncommit abc123 (modified)\n"},
		{"go install", "", "", installed, "jail v1.2.3\ncommit unknown\n"},
		{"no build info", "", "", nil, "jail devel\ncommit unknown\n"},
	} {
		got := versionText(tc.ver, tc.rev, tc.bi, "2.5.4")
		if want := tc.want + "libseccomp 2.5.4\n" + goLine; got != want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, got, want)
		}
	}
}

// TestSeccompVersion: the libseccomp version is the linked library's own,
// a dotted triple, never empty.
func TestSeccompVersion(t *testing.T) {
	v := seccompVersion()
	parts := strings.Split(v, ".")
	if major, err := strconv.Atoi(parts[0]); len(parts) != 3 || err != nil || major < 2 {
		t.Errorf("libseccomp version %q", v)
	}
}
