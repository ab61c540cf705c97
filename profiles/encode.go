package profiles

// Encoding: the resolved profile written back as TOML, every effective
// setting spelled out, so `jail show` tells a user exactly what a run will
// do and its hash names exactly that policy.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/jail-sandbox/jail/internal/tomlstrict"
	"github.com/jail-sandbox/jail/seccomp/policyfile"
)

// Encode writes the resolved profile as TOML that Load accepts: every key
// with its effective value (defaults included), rlimits that are not set
// named in a comment, mounts with only the keys their type uses. Loading the
// output yields the same Profile, except that a workspace's directory, which
// only --workspace may give, is written as a comment.
func (p *Profile) Encode() ([]byte, error) {
	var b strings.Builder
	kv := func(key, value string) { fmt.Fprintf(&b, "%s = %s\n", tomlstrict.JoinKey("", key), value) }
	str := func(key, value string) { kv(key, tomlstrict.Quote(value)) }
	num := func(key string, n uint32) { kv(key, strconv.FormatUint(uint64(n), 10)) }

	str("description", p.Description)
	str("hostname", p.Hostname)
	if p.AuditLog != "" {
		str("audit_log", p.AuditLog)
	}
	if p.Secrets.File != "" {
		fmt.Fprintf(&b, "secrets = { file = %s }\n", tomlstrict.Quote(p.Secrets.File))
	}
	str("cwd", p.Cwd)
	kv("new_session", strconv.FormatBool(p.NewSession))
	if p.SessionKeyring != "" {
		str("session_keyring", p.SessionKeyring)
	}

	b.WriteString("\n[user]\n")
	num("uid", p.User.UID)
	num("gid", p.User.GID)
	str("name", p.User.Name)
	num("host_uid", p.User.HostUID)
	num("host_gid", p.User.HostGID)

	b.WriteString("\n[env]\n")
	kv("keep", tomlstrict.QuoteList(p.Env.Keep))
	b.WriteString("\n[env.set]\n")
	for _, k := range slices.Sorted(maps.Keys(p.Env.Set)) {
		str(k, p.Env.Set[k])
	}

	b.WriteString("\n[limits]\n")
	kv("time", formatTime(p.Limits.Time))
	p.Limits.encodeCgroup(kv, str, &b)
	var inherited []string
	for _, r := range rlimits {
		v := *p.Limits.rlimit(r.key)
		if v == nil {
			inherited = append(inherited, r.key)
			continue
		}
		switch r.kind {
		case sizeLimit:
			kv(r.key, formatSize(*v))
		case countLimit:
			kv(r.key, formatCount(*v))
		case cpuLimit:
			kv(r.key, formatCPU(*v))
		}
	}
	if len(inherited) > 0 {
		fmt.Fprintf(&b, "# not set, so inherited from the caller: %s\n", strings.Join(inherited, ", "))
	}

	p.Network.encode(&b)

	p.Seccomp.encode(&b)

	for _, m := range p.Mounts {
		b.WriteString("\n[[mount]]\n")
		m.encode(&b)
	}
	encodeCredentials(&b, p.Credentials)
	return []byte(b.String()), nil
}

// encode writes one mount's keys: those its type uses, defaults included.
func (m *Mount) encode(b *strings.Builder) {
	kv := func(key, value string) { fmt.Fprintf(b, "%s = %s\n", key, value) }
	kv("type", tomlstrict.Quote(m.Type))
	keys := mountTypes[m.Type].keys
	if slices.Contains(keys, "src") {
		kv("src", tomlstrict.Quote(m.Src))
	}
	if m.Type == workspaceType && m.Src != "" {
		fmt.Fprintf(b, "# src = %s, from --workspace\n", tomlstrict.Quote(m.Src))
	}
	kv("dst", tomlstrict.Quote(m.Dst))
	if m.Unmasked {
		b.WriteString("# UNMASKED PROC: the host's kernel command line and interrupt counts readable, /proc/sys not read-only: for a jail that runs jails\n")
		kv("masked", "false")
	}
	if slices.Contains(keys, "optional") {
		kv("optional", strconv.FormatBool(m.Optional))
	}
	if slices.Contains(keys, "size") {
		if m.Size > 0 {
			kv("size", formatSize(uint64(m.Size)))
		} else {
			b.WriteString("# size not set: the kernel's default, half of RAM\n")
		}
	}
	if slices.Contains(keys, "mode") {
		if m.Mode != 0 {
			kv("mode", formatMode(m.Mode))
		} else {
			fmt.Fprintf(b, "# mode not set: the default for a %s\n", m.Type)
		}
	}
	if slices.Contains(keys, "target") {
		kv("target", tomlstrict.Quote(m.Target))
	}
	if slices.Contains(keys, "content") {
		kv("content", tomlstrict.Quote(m.Content))
	}
}

// Hash names the resolved policy for the status record: the hex SHA-256 of
// Encode's output and of the seccomp policy it names, so two runs with the
// same hash ran under the same policy.
func (p *Profile) Hash() string {
	data, err := p.Encode()
	if err != nil {
		return ""
	}
	h := sha256.New()
	h.Write(data)
	if r := p.Seccomp.resolved; r != nil && p.Seccomp.Inline == nil {
		h.Write([]byte("\n# the seccomp policy it names\n"))
		h.Write(policyfile.Encode(r))
	}
	return hex.EncodeToString(h.Sum(nil))
}
