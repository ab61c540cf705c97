package jail

import (
	"strings"
	"testing"
)

// TestShHints: each suggestion jail's messages make is respelled for
// jail-sh, a refusal of a flag's value is left as it is, and a line too
// long for the runner's buffer is cut, never overrun.
func TestShHints(t *testing.T) {
	for in, want := range map[string]string{
		"network: refused lookup of a.test (not on the allowlist of profile agent; allow it with --allow a.test)":                             "network: refused lookup of a.test (not on the allowlist of profile agent; allow it with JAIL_ALLOW=a.test)",
		"network is off in this jail; refused lookup of a.test (allow it with --allow a.test)":                                                "network is off in this jail; refused lookup of a.test (allow it with JAIL_ALLOW=a.test)",
		"network: refused a.test:22 (reason; allow it with --allow a.test:22)":                                                                "network: refused a.test:22 (reason; allow it with JAIL_ALLOW=a.test:22)",
		"credential K: K is bound to a.test, which is not on the allowlist: allow it (--allow a.test, or network.allow) or bind another host": "credential K: K is bound to a.test, which is not on the allowlist: allow it (JAIL_ALLOW=a.test, or network.allow) or bind another host",
		"cgroup limits are out of reach (or let the run go on without them: --limits-mode best-effort)":                                       `cgroup limits are out of reach (or let the run go on without them: JAIL_FLAGS="--limits-mode best-effort")`,
		"fix: run jail as root, or run with --limits-mode best-effort (rlimit stand-ins)":                                                     `fix: run jail as root, or run with JAIL_FLAGS="--limits-mode best-effort" (rlimit stand-ins)`,
		"credential K: no secrets file to read its value from: give --secrets FILE or [secrets] file":                                         `credential K: no secrets file to read its value from: give JAIL_FLAGS="--secrets FILE" or [secrets] file`,
		// Refusals of what the user gave name the flag JAIL_FLAGS holds.
		`--allow "http://x": want HOST`:                                     `--allow "http://x": want HOST`,
		`--network "none": --allow and --pin-host need --network allowlist`: `--network "none": --allow and --pin-host need --network allowlist`,
		`--limits-mode "soft": want "enforce"`:                              `--limits-mode "soft": want "enforce"`,
		"":                                                                  "",
		"allow it with --allow ":                                            "allow it with JAIL_ALLOW=",
		"--limits-mode best-effort --limits-mode best-effort": `JAIL_FLAGS="--limits-mode best-effort" JAIL_FLAGS="--limits-mode best-effort"`,
	} {
		if got := ShHints(in); got != want {
			t.Errorf("ShHints(%q)\n = %q\nwant %q", in, got, want)
		}
	}
	// Cut to the buffer, a replacement too.
	for size, want := range map[int]string{1: "", 5: "allo", 16: "allow it with J", 40: "allow it with JAIL_ALLOW=a.test"} {
		if got, within := shHints("allow it with --allow a.test", size); got != want || !within {
			t.Errorf("in %d bytes: %q (within them: %v), want %q", size, got, within, want)
		}
	}
	long := strings.Repeat("--limits-mode best-effort ", 100)
	if got, want := ShHints(long), strings.Repeat(`JAIL_FLAGS="--limits-mode best-effort" `, 100); got != want {
		t.Errorf("ShHints of a long line = %q", got)
	}
}
