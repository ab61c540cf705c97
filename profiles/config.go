package profiles

// Conversion: a resolved profile and the command become the jail.Config of
// one run. Only what the profile lists crosses over from the host.

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/mount"
)

// Config builds one run's configuration: argv is the command, hostEnv the
// caller's environment, consulted only for the variables env.keep names and
// for HOME to expand "~/" in bind sources (security invariant 5: nothing
// else leaks). The profile is re-checked first, so a Profile changed by code
// is held to the same rules as a loaded one.
func (p *Profile) Config(argv, hostEnv []string) (jail.Config, error) {
	if len(argv) == 0 {
		return jail.Config{}, errors.New("no command to run")
	}
	if err := errors.Join(p.check(), p.reachableCredentials()); err != nil {
		return jail.Config{}, fmt.Errorf("profile %q: %w", p.Name, err)
	}
	mounts, err := p.mountSpecs(hostEnv)
	if err != nil {
		return jail.Config{}, err
	}
	policy := p.Seccomp.Inline
	if policy == nil {
		policy = p.Seccomp.resolved // check saw it there, and that it is what the profile names
	}
	c := jail.Config{
		Profile:    p.Name,
		Argv:       slices.Clone(argv),
		Env:        p.setEnv(),
		KeepEnv:    p.keptEnv(),
		Dir:        p.Cwd,
		Hostname:   p.Hostname,
		NewSession: p.NewSession,
		// What check allowed: "own" or "best-effort".
		KeyringBestEffort: p.SessionKeyring == keyringBestEffort,
		UID:               p.User.UID,
		GID:               p.User.GID,
		HostUID:           p.User.HostUID,
		HostGID:           p.User.HostGID,
		Mounts:            mounts,
		TimeLimit:         p.Limits.Time,
		Limits:            p.Limits.cgroupLimits(),
		Network:           p.Network.config(),
		AuditLog:          p.AuditLog,

		Seccomp:      clonePolicy(policy),
		SeccompAudit: p.Seccomp.Audit,
		SeccompQuiet: p.Seccomp.Quiet,
	}
	for _, r := range rlimits {
		if v := *p.Limits.rlimit(r.key); v != nil {
			rl := jail.Rlimit{Resource: r.resource, Soft: *v, Hard: *v}
			if r.resource == unix.RLIMIT_CPU && *v != unix.RLIM_INFINITY {
				// A second of grace to the hard limit: at the soft one
				// the kernel sends SIGXCPU, which says why (at the hard
				// one, SIGKILL, which does not).
				rl.Hard = *v + 1
			}
			c.Rlimits = append(c.Rlimits, rl)
		}
	}
	return c, nil
}

// setEnv is env.set as KEY=value, sorted for a deterministic Config; with
// the allowlist, the proxy variables every tool reads come first, with
// none the offline ones (env.set may still override them).
func (p *Profile) setEnv() []string {
	set := maps.Clone(p.Env.Set)
	var mode map[string]string
	switch p.Network.Mode {
	case networkAllowlist:
		mode = proxyEnv
	case networkNone:
		mode = offlineEnv
	}
	for k, v := range mode {
		if _, ok := set[k]; !ok {
			set[k] = v
		}
	}
	env := make([]string, 0, len(set))
	for _, k := range slices.Sorted(maps.Keys(set)) {
		env = append(env, k+"="+set[k])
	}
	return env
}

// proxyEnv points tools that read it at the allowlist proxy (jail/stage.h's
// ports): HTTP and HTTPS through its HTTP proxy, anything else through
// SOCKS5 with names resolved by the proxy. Programs that ignore it get the
// same policy through the jail's TUN device and resolver; for Node, whose
// fetch reads the variables only when told to, NODE_USE_ENV_PROXY.
var proxyEnv = map[string]string{
	"NODE_USE_ENV_PROXY": "1",
	// npm retries even "no such name" twice, 10 s and then 60 s apart:
	// a refused host would cost an agent's call 70 s. Still twice, but
	// a second apart.
	"npm_config_fetch_retry_mintimeout": "1000", "npm_config_fetch_retry_maxtimeout": "2000",
	"HTTP_PROXY": "http://127.0.0.1:3128", "http_proxy": "http://127.0.0.1:3128",
	"HTTPS_PROXY": "http://127.0.0.1:3128", "https_proxy": "http://127.0.0.1:3128",
	"ALL_PROXY": "socks5h://127.0.0.1:1080", "all_proxy": "socks5h://127.0.0.1:1080",
	"NO_PROXY": "localhost,127.0.0.1,::1", "no_proxy": "localhost,127.0.0.1,::1",
}

// offlineEnv is for network = "none", where no connection can ever
// succeed: package managers that retry every network error (npm for 70 s,
// pip for 8) are told not to, so the agent reads the refusal at once.
var offlineEnv = map[string]string{"npm_config_fetch_retries": "0", "PIP_RETRIES": "0"}

// keptEnv is env.keep without the names env.set gives a value (it wins);
// the jail reads the host's values when it starts.
func (p *Profile) keptEnv() []string {
	var keep []string
	for _, k := range p.Env.Keep {
		if _, set := p.Env.Set[k]; !set {
			keep = append(keep, k)
		}
	}
	return keep
}

// lookupEnv finds key in a KEY=value list; the last entry wins, as it does
// for exec.Cmd.
func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// resolvConf names jail's resolver on the jail's own loopback (every
// network mode but host): in none it answers every name "no such name" at
// once, so tools fail in milliseconds rather than after minutes of
// retries; in allowlist it answers the allowed names.
const resolvConf = "nameserver 127.0.0.1\noptions attempts:1\n"

// mountSpecs converts the mounts, expanding "~/" with the caller's HOME, and
// adds the generated /etc/resolv.conf (unless the network is the host's)
// and, when the profile names a user, /etc/passwd and /etc/group, each
// unless the profile mounts it itself.
func (p *Profile) mountSpecs(hostEnv []string) ([]mount.Spec, error) {
	specs := make([]mount.Spec, 0, len(p.Mounts)+2)
	has := map[string]bool{}
	for _, m := range p.Mounts {
		s := mount.Spec{
			Kind: mountTypes[m.Type].kind, Src: m.Src, Dst: m.Dst, Size: m.Size, Mode: m.Mode,
			Target: m.Target, Optional: m.Optional, Unmasked: m.Unmasked,
		}
		if m.Content != "" {
			s.Content = []byte(m.Content)
		}
		if m.Type == workspaceType && m.Src == "" {
			return nil, fmt.Errorf("profile %q mounts a workspace at %s: give --workspace DIR", p.Name, m.Dst)
		}
		if m.Type == workspaceType {
			s.IfMissing = "create the workspace first, or give --workspace a directory that exists"
		}
		if strings.HasPrefix(m.Src, "~") {
			src, err := expandHome(m.Src, hostEnv)
			if err != nil {
				return nil, fmt.Errorf("mount %s: %w", m.Dst, err)
			}
			s.Src = src
		}
		has[m.Dst] = true
		specs = append(specs, s)
	}
	if p.Network.Mode != networkHost && !has["/etc/resolv.conf"] {
		specs = append(specs, mount.Spec{Kind: mount.File, Dst: "/etc/resolv.conf", Mode: 0o644, Content: []byte(resolvConf)})
	}
	if p.User.Name == "" {
		return specs, nil
	}
	if !has["/etc/passwd"] {
		specs = append(specs, mount.Spec{Kind: mount.File, Dst: "/etc/passwd", Mode: 0o644, Content: p.passwd()})
	}
	if !has["/etc/group"] {
		specs = append(specs, mount.Spec{Kind: mount.File, Dst: "/etc/group", Mode: 0o644, Content: p.group()})
	}
	return specs, nil
}

// expandHome turns "~" or "~/rest" into a path under the caller's HOME.
func expandHome(src string, hostEnv []string) (string, error) {
	home, ok := lookupEnv(hostEnv, "HOME")
	if !ok || !filepath.IsAbs(home) {
		return "", fmt.Errorf("src %q: HOME is not set to an absolute path", src)
	}
	return filepath.Join(home, strings.TrimPrefix(src, "~")), nil
}

// passwd generates /etc/passwd: programs that look up their own uid (ssh,
// git, python's getpass, a shell's prompt) fail or misbehave without an
// entry, and the host's file must not be shown.
func (p *Profile) passwd() []byte {
	home := "/"
	if h := p.Env.Set["HOME"]; h != "" && !strings.ContainsAny(h, ":\n") {
		home = h // a ':' or newline would break the line's fields
	}
	var b strings.Builder
	b.WriteString("root:x:0:0:root:/root:/usr/sbin/nologin\n")
	if u := p.User.UID; u != 0 && u != 65534 {
		fmt.Fprintf(&b, "%s:x:%d:%d:%s:%s:/bin/sh\n", p.User.Name, u, p.User.GID, p.User.Name, home)
	}
	b.WriteString("nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
	return []byte(b.String())
}

// group generates /etc/group to match passwd.
func (p *Profile) group() []byte {
	var b strings.Builder
	b.WriteString("root:x:0:\n")
	if g := p.User.GID; g != 0 && g != 65534 {
		b.WriteString(p.User.Name + ":x:" + strconv.FormatUint(uint64(g), 10) + ":\n")
	}
	b.WriteString("nogroup:x:65534:\n")
	return []byte(b.String())
}
