package seccomp_test

import (
	"testing"

	"github.com/jail-sandbox/jail/seccomp"
)

// TestRefuses: a syscall is refused for every call only when no rule lets
// any call through and either the default refuses or a rule without
// conditions does.
func TestRefuses(t *testing.T) {
	allow, eperm := seccomp.Action{Kind: seccomp.Allow}, seccomp.Action{Kind: seccomp.Errno, Errno: 1}
	cond := []seccomp.Cond{{Index: 0, Op: seccomp.Eq, Value: 1}}
	for _, c := range []struct {
		name string
		p    seccomp.Policy
		want bool
	}{
		{"allowed by default", seccomp.Policy{Default: allow}, false},
		{"refused by a rule", seccomp.Policy{Default: allow, Rules: []seccomp.Rule{{Names: []string{"keyctl"}, Action: eperm}}}, true},
		{"refused by its group", seccomp.Policy{Default: allow, Rules: []seccomp.Rule{{Names: []string{"@keyring"}, Action: eperm}}}, true},
		{"refused under a condition only", seccomp.Policy{Default: allow, Rules: []seccomp.Rule{{Names: []string{"keyctl"}, Action: eperm, Conds: cond}}}, false},
		{"refused by default", seccomp.Policy{Default: eperm}, true},
		{"refused by default, allowed under a condition", seccomp.Policy{Default: eperm, Rules: []seccomp.Rule{{Names: []string{"keyctl"}, Action: allow, Conds: cond}}}, false},
		{"refused, then allowed again", seccomp.Policy{Default: allow, Rules: []seccomp.Rule{{Names: []string{"keyctl"}, Action: eperm}, {Names: []string{"keyctl"}, Action: allow}}}, false},
		{"handed to the runner", seccomp.Policy{Default: allow, Rules: []seccomp.Rule{{Names: []string{"keyctl"}, Action: seccomp.Action{Kind: seccomp.Notify}}}}, true},
		{"logged", seccomp.Policy{Default: allow, Rules: []seccomp.Rule{{Names: []string{"keyctl"}, Action: seccomp.Action{Kind: seccomp.Log}}}}, false},
		{"no filter", seccomp.Policy{None: true}, false},
	} {
		if got := c.p.Refuses("keyctl"); got != c.want {
			t.Errorf("%s: Refuses(keyctl) = %v, want %v", c.name, got, c.want)
		}
	}
	// The built-ins: default refuses the keyring; container, for a jail
	// that runs jails, lets keyctl through.
	def, ctr := loadPolicy(t, "default"), loadPolicy(t, "container")
	for _, name := range []string{"keyctl", "add_key", "request_key"} {
		if !def.Refuses(name) {
			t.Errorf("default: %s not refused", name)
		}
	}
	if ctr.Refuses("keyctl") {
		t.Errorf("container: keyctl refused")
	}
}
