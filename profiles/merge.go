package profiles

// Merging: an `extends` chain folded into one profile, parent first, each
// child overriding only what it sets.

// merge folds layers (the child first, its root ancestor last) over the
// defaults. Scalars and [user]/[limits] fields take the child's value when
// it sets one; env.keep is the union, parent order first; env.set merges per
// variable; a mount with the same dst replaces the parent's in place, others
// are appended in order. [seccomp]'s audit merges like a scalar; its policy
// comes whole from the nearest layer that names one, which build resolves.
func merge(layers []*layer) *Profile {
	p := defaults()
	for i := len(layers) - 1; i >= 0; i-- {
		p.overlay(layers[i])
	}
	return &p
}

// overlay applies one layer's settings over p.
func (p *Profile) overlay(l *layer) {
	c, set := &l.p, l.set
	if set["description"] {
		p.Description = c.Description
	}
	if set["hostname"] {
		p.Hostname = c.Hostname
	}
	if set["secrets.file"] {
		p.Secrets.File = c.Secrets.File
	}
	if set["audit_log"] {
		p.AuditLog = c.AuditLog
	}
	if set["cwd"] {
		p.Cwd = c.Cwd
	}
	if set["new_session"] {
		p.NewSession = c.NewSession
	}
	if set["session_keyring"] {
		p.SessionKeyring = c.SessionKeyring
	}
	for _, id := range []struct {
		key      string
		dst, src *uint32
	}{
		{"user.uid", &p.User.UID, &c.User.UID},
		{"user.gid", &p.User.GID, &c.User.GID},
		{"user.host_uid", &p.User.HostUID, &c.User.HostUID},
		{"user.host_gid", &p.User.HostGID, &c.User.HostGID},
	} {
		if set[id.key] {
			*id.dst = *id.src
		}
	}
	if set["user.name"] {
		p.User.Name = c.User.Name
	}
	if set["limits.time"] {
		p.Limits.Time = c.Limits.Time
	}
	if set["limits.memory"] {
		p.Limits.Memory = cloneLimit(c.Limits.Memory)
	}
	if set["limits.pids"] {
		p.Limits.Pids = cloneLimit(c.Limits.Pids)
	}
	if set["limits.cpu"] {
		p.Limits.CPU = cloneLimit(c.Limits.CPU)
	}
	if set["limits.max_output"] {
		p.Limits.MaxOutput = cloneLimit(c.Limits.MaxOutput)
	}
	if set["limits.disk"] {
		p.Limits.Disk = cloneLimit(c.Limits.Disk)
	}
	if set["limits.session_disk"] {
		p.Limits.SessionDisk = cloneLimit(c.Limits.SessionDisk)
	}
	if set["limits.disk_reserve"] {
		p.Limits.DiskReserve = cloneLimit(c.Limits.DiskReserve)
	}
	if set["limits.mode"] {
		p.Limits.Mode = c.Limits.Mode
	}
	if set["limits.on_pids_limit"] {
		p.Limits.OnPidsLimit = c.Limits.OnPidsLimit
	}
	if set["limits.cgroup_parent"] {
		p.Limits.CgroupParent = c.Limits.CgroupParent
	}
	for _, r := range rlimits {
		if set["limits."+r.key] {
			n := **c.Limits.rlimit(r.key)
			*p.Limits.rlimit(r.key) = &n
		}
	}
	p.Network.merge(&c.Network, set)
	p.mergeCredentials(c.Credentials)
	if set["seccomp.audit"] {
		p.Seccomp.Audit = c.Seccomp.Audit
	}
	if set["seccomp.report"] {
		p.Seccomp.Quiet = c.Seccomp.Quiet
	}
	for _, k := range c.Env.Keep {
		p.keepEnv(k)
	}
	for k, v := range c.Env.Set {
		p.Env.Set[k] = v
	}
	for _, m := range c.Mounts {
		p.addMount(m)
	}
}

// keepEnv adds name to env.keep unless it is there already.
func (p *Profile) keepEnv(name string) {
	for _, k := range p.Env.Keep {
		if k == name {
			return
		}
	}
	p.Env.Keep = append(p.Env.Keep, name)
}

// addMount replaces the mount at m.Dst in place, or appends m: a later
// source (a child profile, a flag) redefines what is at a destination
// without reordering the rest.
func (p *Profile) addMount(m Mount) {
	for i := range p.Mounts {
		if p.Mounts[i].Dst == m.Dst {
			p.Mounts[i] = m
			return
		}
	}
	p.Mounts = append(p.Mounts, m)
}
