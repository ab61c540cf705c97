package jail

// The session keyring: PID 1 joins a new one (init.c keyring_join), so the
// caller's keys (API tokens, Kerberos tickets) are not reachable from the
// jail. Where a seccomp filter outside jail refuses keyctl (Docker's
// default profile), the profile may let the jail go on in the caller's
// (session_keyring = "best-effort"), only when the jail could not use it.

import (
	"fmt"

	"github.com/jail-sandbox/jail/mount"
)

// checkKeyringBestEffort refuses session_keyring = "best-effort" unless the
// jail cannot reach the keyring it would stay in: its command's filter
// refuses every keyring syscall (the default policy's @keyring group), not
// only reports them (audit), and /proc/keys, which lists the keys it could
// view, is masked.
func checkKeyringBestEffort(cfg Config) error {
	if !cfg.KeyringBestEffort {
		return nil
	}
	const why = `session_keyring = "best-effort" lets the jail stay in the caller's session keyring, so its command must not be able to use it`
	p := cfg.Seccomp
	switch {
	case p == nil || p.None:
		return fmt.Errorf("%s: it has no seccomp filter; fix: a policy that refuses keyctl, add_key and request_key (default does)", why)
	case cfg.SeccompAudit:
		return fmt.Errorf("%s: its seccomp filter only reports (audit), letting keyctl through; fix: no audit, or session_keyring = \"own\"", why)
	}
	for _, name := range []string{"keyctl", "add_key", "request_key"} {
		if !p.Refuses(name) {
			return fmt.Errorf("%s: seccomp policy %s lets %s through; fix: refuse the @keyring group (default does), or session_keyring = \"own\"", why, p.Name, name)
		}
	}
	for _, m := range cfg.Mounts {
		if m.Kind == mount.Proc && m.Unmasked {
			return fmt.Errorf("%s: its procfs at %s is unmasked, and /proc/keys lists the keys it could view; fix: masked = true, or session_keyring = \"own\"", why, m.Dst)
		}
	}
	return nil
}
