package jail

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// TestRunPlanRootFlags: the runner refuses a plan whose root flags
// contradict each other or its trees: RUN_NO_ADMIN means nothing is cloned,
// and only a root caller's plan may say it.
func TestRunPlanRootFlags(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("plans with trees are a root caller's")
	}
	var plan, bare []byte // with trees, and without
	for i, cfg := range seedConfigs() {
		switch cfg.Profile {
		case "full":
			plan = seedPlans(t)[i]
		case "none":
			bare = seedPlans(t)[i]
		}
	}
	// The flags follow magic, version and the time limit.
	const at = 4 + 4 + 8
	if got := binary.LittleEndian.Uint32(plan[at:]); got != runRoot {
		t.Fatalf("seed plan's flags %#x, want RUN_ROOT: this test reads the wrong offset", got)
	}
	for _, c := range []struct {
		plan  []byte
		flags uint32
		ok    bool
	}{
		{plan, runRoot, true},
		{plan, runRoot | runNoAdmin, false}, // trees, yet nothing may be cloned
		{plan, runNoAdmin, false},
		{plan, 0, false}, // trees without root
		{bare, runRoot | runNoAdmin, true},
		{bare, runNoAdmin, false}, // not root, yet without CAP_SYS_ADMIN as root
	} {
		b := append([]byte(nil), c.plan...)
		binary.LittleEndian.PutUint32(b[at:], c.flags)
		_, err := runPlanDecode(b)
		if (err == nil) != c.ok {
			t.Errorf("flags %#x: err %v, want ok %v", c.flags, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "inconsistent") {
			t.Errorf("flags %#x: %v, want the inconsistency named", c.flags, err)
		}
	}
}
