package jail

import (
	"io/fs"
	"time"

	"jail/internal/wire"
	"jail/mount"
)

// Wire values shared with the C side (stage.h, runplan.h).
const (
	runPlanMagic   = 0x4e55524a // "JRUN"
	runPlanVersion = 1
	runRoot        = 1

	treeReadOnly = 1
	treeIDMap    = 2

	procNewSession = 1
	procDropGroups = 2
)

// Plan is one run, planned: the run plan the runner (runner.c) carries
// out, and the host paths it was made from, as lstat saw them (nil: absent),
// for the plan cache to tell when it goes stale.
type Plan struct {
	Data []byte
	Deps map[string]fs.FileInfo
}

// PlanOptions are a run's parts that are not the jail's policy.
type PlanOptions struct {
	// Protected are host paths no writable bind may reach (jail's state).
	Protected []string
}

// NewPlan resolves cfg against the host (mount sources, who the caller
// is) into a run plan. Everything that can fail before the jail exists
// fails here, with the reason.
func NewPlan(cfg Config, opts PlanOptions) (*Plan, error) {
	ids, err := callerIDs(&cfg)
	if err != nil {
		return nil, err
	}
	mounts, err := mount.Prepare(cfg.Mounts, mount.Options{Root: ids.root, Protected: opts.Protected})
	if err != nil {
		return nil, err
	}
	var w wire.Writer
	w.Grow(mounts.Size() + 4096)
	w.U32(runPlanMagic)
	w.U32(runPlanVersion)
	w.U64(uint64(cfg.TimeLimit / time.Nanosecond))
	w.U32(bit(ids.root, runRoot))
	w.U32(ids.uid)
	w.U32(ids.gid)
	w.U32(cfg.UID)
	w.U32(cfg.GID)
	w.Str(cfg.Profile)
	w.Str(cfg.ProfileHash)
	w.U32(uint32(len(mounts.Trees)))
	for _, t := range mounts.Trees {
		w.Str(t.Path)
		w.U32(bit(t.ReadOnly, treeReadOnly) | bit(t.IDMap, treeIDMap))
		w.U32(t.UID)
		w.U32(t.GID)
	}
	m := w.Begin()
	mounts.Encode(&w)
	w.End(m)

	// The process section's fixed part, as init.c's decode_proc reads it;
	// the runner adds this run's command, environment and umask.
	prefix := w.Begin()
	w.U32(bit(cfg.NewSession, procNewSession) | bit(ids.root, procDropGroups))
	w.U32(cfg.UID)
	w.U32(cfg.GID)
	w.Str(cfg.Hostname)
	w.Str(cfg.Dir)
	w.End(prefix)
	w.Strs(cfg.KeepEnv)
	w.Strs(cfg.Env)
	rl := w.Begin()
	w.U32(uint32(len(cfg.Rlimits)))
	for _, r := range cfg.Rlimits {
		w.U32(uint32(r.Resource))
		w.U64(r.Soft)
		w.U64(r.Hard)
	}
	w.End(rl)
	return &Plan{Data: w.Data(), Deps: mounts.Deps}, nil
}

// bit is flag when on is set, else 0.
func bit(on bool, flag uint32) uint32 {
	if on {
		return flag
	}
	return 0
}
