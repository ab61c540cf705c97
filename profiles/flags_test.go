package profiles

import (
	"reflect"
	"testing"
	"time"
)

// TestFlagsParse checks the CLI's spellings of the limits against the typed
// values library callers give.
func TestFlagsParse(t *testing.T) {
	for _, tc := range []struct {
		f    Flags
		want Overrides
	}{
		{Flags{}, Overrides{}},
		{Flags{Overrides: Overrides{Workspace: "/w", Network: NetworkHost}}, Overrides{Workspace: "/w", Network: NetworkHost}},
		{Flags{TimeLimit: "90s"}, Overrides{TimeLimit: new(90 * time.Second)}},
		{Flags{TimeLimit: "none"}, Overrides{TimeLimit: new(time.Duration(0))}},
		{Flags{TimeLimit: "0"}, Overrides{TimeLimit: new(time.Duration(0))}},
		{Flags{Memory: "512M"}, Overrides{Memory: new(uint64(512 << 20))}},
		{Flags{Memory: "512Mi"}, Overrides{Memory: new(uint64(512 << 20))}},
		{Flags{Memory: "512MiB"}, Overrides{Memory: new(uint64(512 << 20))}},
		{Flags{Memory: "512MB"}, Overrides{Memory: new(uint64(512 << 20))}},
		{Flags{Memory: "1.5G"}, Overrides{Memory: new(uint64(3 << 29))}},
		{Flags{Memory: "4194304"}, Overrides{Memory: new(uint64(4 << 20))}},
		{Flags{Memory: "unlimited"}, Overrides{Memory: new(Unlimited)}},
		{Flags{Pids: "64"}, Overrides{Pids: new(uint64(64))}},
		{Flags{Pids: "unlimited"}, Overrides{Pids: new(Unlimited)}},
		{Flags{CPU: "0.5"}, Overrides{CPU: new(0.5)}},
		{Flags{CPU: "2"}, Overrides{CPU: new(2.0)}},
		{Flags{CPU: "unlimited"}, Overrides{CPU: new(0.0)}},
		{Flags{MaxOutput: "1K"}, Overrides{MaxOutput: new(uint64(1024))}},
		{Flags{MaxOutput: "1KiB"}, Overrides{MaxOutput: new(uint64(1024))}},
		{Flags{MaxOutput: "1kb"}, Overrides{MaxOutput: new(uint64(1024))}},
		{Flags{MaxOutput: "0"}, Overrides{MaxOutput: new(uint64(0))}},
		{Flags{MaxOutput: "unlimited"}, Overrides{MaxOutput: new(Unlimited)}},
	} {
		if got := tc.f.Parse(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v.Parse() = %+v, want %+v", tc.f, got, tc.want)
		}
	}
}

// TestFlagsParseKeepsErrors checks that a value that does not parse leaves
// its field alone and is Apply's to report.
func TestFlagsParseKeepsErrors(t *testing.T) {
	o := Flags{Memory: "lots", Pids: "64"}.Parse()
	if o.Memory != nil || o.Pids == nil || len(o.unparsed) != 1 {
		t.Fatalf("Parse = %+v", o)
	}
}

// TestApplyCopiesLimits checks that the profile does not share the caller's
// values: a worker reuses its Overrides for the next run.
func TestApplyCopiesLimits(t *testing.T) {
	p := mustLoad(t, "default", Options{})
	mem := uint64(64 << 20)
	if err := p.Apply(Overrides{Memory: &mem}); err != nil {
		t.Fatal(err)
	}
	mem = 1
	if *p.Limits.Memory != 64<<20 {
		t.Errorf("memory = %d: the profile shares the caller's value", *p.Limits.Memory)
	}
}
