package jail

import (
	"jail/internal/wire"
	"jail/mount"
)

// The plan's framing; stage.h has the same values.
const (
	planMagic   = 0x4c49414a // "JAIL"
	planVersion = 1

	sectionMounts  = 1
	sectionProcess = 2

	procNewSession = 1
	procDropGroups = 2
)

// encodePlan writes everything the init stage needs, in the order init.c
// reads it: header, mount section, process section.
func encodePlan(cfg *Config, ids hostIDs, mounts *mount.Prepared, umask uint32) []byte {
	var m wire.Writer
	mounts.Encode(&m)

	var p wire.Writer
	var flags uint32
	if cfg.NewSession {
		flags |= procNewSession
	}
	if ids.root {
		flags |= procDropGroups
	}
	p.U32(flags)
	p.U32(cfg.UID)
	p.U32(cfg.GID)
	p.Str(cfg.Hostname)
	p.Str(cfg.Dir)
	p.Strs(cfg.Argv)
	p.Strs(cfg.Env)
	p.U32(uint32(len(cfg.Rlimits)))
	for _, r := range cfg.Rlimits {
		p.U32(uint32(r.Resource))
		p.U64(r.Soft)
		p.U64(r.Hard)
	}
	p.U32(umask)

	var w wire.Writer
	w.U32(planMagic)
	w.U32(planVersion)
	w.U32(uint32(len(mounts.Trees)))
	w.Section(sectionMounts, &m)
	w.Section(sectionProcess, &p)
	return w.Data()
}
