package seccomp

import (
	"fmt"
	"slices"
)

// RuleError is a problem with one rule of a policy, by its index in
// Policy.Rules, so that the profile loader can name the rule's file and
// line.
type RuleError struct {
	Rule int
	// Other is the earlier rule it conflicts with, or -1.
	Other int
	Err   error
}

func (e *RuleError) Error() string {
	if e.Rule < 0 {
		return fmt.Sprintf("default: %v", e.Err)
	}
	if e.Other >= 0 {
		return fmt.Sprintf("rule[%d]: %v (the earlier rule: rule[%d])", e.Rule+1, e.Err, e.Other+1)
	}
	return fmt.Sprintf("rule[%d]: %v", e.Rule+1, e.Err)
}

// Unwrap gives the problem without its place.
func (e *RuleError) Unwrap() error { return e.Err }

// effective is one rule for one syscall, after the policy's overrides.
type effective struct {
	name   string
	action Action
	conds  []Cond
	rule   int // index in Policy.Rules
}

// resolve applies the policy language's order to the rules, syscall by
// syscall, as a reader of the policy would: a later rule overrides an
// earlier one. libseccomp has no order (it keeps an unconditional rule
// over any conditional one, and evaluates overlapping conditions in an
// order of its own), so the rules are resolved here, and a policy whose
// compiled filter would do other than it reads is refused:
//
//   - a rule without conditions replaces every earlier rule for the syscall;
//   - a rule with the same conditions as an earlier one replaces it;
//   - a rule with conditions after an unconditional one that takes the
//     default's action drops that one: the conditions are the exception;
//     after one with another action, it is a RuleError (the filter cannot
//     make an exception to an unconditional rule);
//   - two conditional rules with different actions whose conditions can
//     both hold for one call are a RuleError on the later one, unless the
//     earlier takes the default's action (the compiler drops such rules,
//     so the later one wins, as it reads).
//
// Rules that take the default's action stay in the result; the compiler
// drops them.
func (p *Policy) resolve() ([]effective, []error) {
	var errs []error
	bySyscall := map[string][]effective{}
	broken := map[string]bool{}
	var order []string // syscalls, in the order first met
	for i, r := range p.Rules {
		names, err := expandNames(r.Names, map[string]bool{})
		if err != nil {
			errs = append(errs, &RuleError{Rule: i, Other: -1, Err: err})
			continue
		}
		for _, name := range names {
			e := effective{name: name, action: r.Action, conds: r.Conds, rule: i}
			prev, seen := bySyscall[name]
			if !seen {
				order = append(order, name)
			}
			if broken[name] {
				continue // one problem per syscall is enough to fix
			}
			next, other, err := override(prev, e, p.Default)
			if err != nil {
				errs = append(errs, &RuleError{Rule: i, Other: other, Err: fmt.Errorf("%s: %w", name, err)})
				broken[name] = true
				continue
			}
			bySyscall[name] = next
		}
	}
	var out []effective
	for _, name := range order {
		out = append(out, bySyscall[name]...)
	}
	return out, errs
}

// override adds e to the rules already there for its syscall; on error,
// other is the earlier rule e conflicts with.
func override(prev []effective, e effective, def Action) (next []effective, other int, err error) {
	if len(e.conds) == 0 {
		return []effective{e}, -1, nil
	}
	if len(prev) == 1 && len(prev[0].conds) == 0 {
		u := prev[0]
		switch {
		case u.action == def:
			prev = nil
		case u.action == e.action:
			return prev, -1, nil // already covered
		default:
			return nil, u.rule, fmt.Errorf("conditions %s with action %v after an earlier rule's %v for every call: "+
				"the filter cannot make that exception; write the exception first, or give the earlier rule the default's action",
				condString(e.conds), e.action, u.action)
		}
	}
	out := slices.Clone(prev)
	replaced := false
	for i, x := range out {
		if slices.Equal(x.conds, e.conds) {
			out[i], replaced = e, true
		}
	}
	if !replaced {
		out = append(out, e)
	}
	if len(out) > 1 {
		if other, err := mergeable(out, e); err != nil {
			return nil, other, err
		}
	}
	for _, x := range out {
		if x.rule == e.rule || x.action == e.action || x.action == def || disjoint(x.conds, e.conds) {
			continue
		}
		if e.action == def {
			return nil, x.rule, fmt.Errorf("conditions %s with the default's action %v would be ignored where an earlier rule's %s (%v) also holds: "+
				"the filter has no rule order; make the conditions exclude each other, or override the earlier rule with the same conditions",
				condString(e.conds), e.action, condString(x.conds), x.action)
		}
		return nil, x.rule, fmt.Errorf("conditions %s with action %v can hold together with an earlier rule's %s (%v): "+
			"the filter has no rule order; make the conditions exclude each other, give both one action, or override the earlier rule with the same conditions",
			condString(e.conds), e.action, condString(x.conds), x.action)
	}
	return out, -1, nil
}

// mergeable checks a syscall's conditional rules (more than one) against
// what libseccomp 2.5 merges correctly into one tree. eq and masked_eq
// conditions always merge right; lt, le, gt, ge and ne only when every
// rule of the syscall compares just one argument, the same one, with
// values of 32 bits. Outside that it miscompiles: with "arg0 >= 2^32+2"
// and "arg0 <= 2" it also matches 3; with ranges on two arguments across
// rules it matches calls neither rule names (bpf_test.go finds such
// cases). A single rule is always right. On error, other is the rule to
// name with e.
func mergeable(out []effective, e effective) (int, error) {
	var ranged *effective
	for i, x := range out {
		if _, ok := rangeCond(x.conds); ok {
			ranged = &out[i]
			break
		}
	}
	if ranged == nil {
		return -1, nil
	}
	other := func(x effective) int {
		if x.rule != e.rule {
			return x.rule
		}
		for _, y := range out {
			if y.rule != e.rule {
				return y.rule
			}
		}
		return -1
	}
	c, _ := rangeCond(ranged.conds)
	for _, x := range out {
		for _, y := range x.conds {
			switch {
			case len(x.conds) > 1 || y.Index != c.Index:
				return other(x), fmt.Errorf("the syscall has several conditional rules, one comparing with %v, "+
					"and %s compares more than that one argument: libseccomp 2.5 compiles that wrongly; "+
					"with several rules for one syscall, compare other arguments with eq or masked_eq only", c.Op, ruleName(x, e))
			case y.Value > 0xffffffff || y.Mask > 0xffffffff:
				return other(x), fmt.Errorf("the syscall has several conditional rules, one comparing with %v, "+
					"and %s compares a value above 32 bits: libseccomp 2.5 compiles that wrongly; "+
					"with several rules for one syscall, compare 64-bit values with eq or masked_eq only", c.Op, ruleName(x, e))
			}
		}
	}
	return -1, nil
}

// rangeCond finds a condition other than eq and masked_eq.
func rangeCond(conds []Cond) (Cond, bool) {
	for _, c := range conds {
		if c.Op != Eq && c.Op != MaskedEq {
			return c, true
		}
	}
	return Cond{}, false
}

// ruleName says which rule x is, seen from e.
func ruleName(x, e effective) string {
	if x.rule == e.rule {
		return "this rule"
	}
	return fmt.Sprintf("the rule %s", condString(x.conds))
}

// disjoint says whether no call can satisfy both condition lists: some
// argument both compare has no value that passes both. It answers false
// when unsure.
func disjoint(a, b []Cond) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Index == y.Index && excludes(x, y) {
				return true
			}
		}
	}
	return false
}

// excludes says whether no value passes both conditions on one argument.
func excludes(x, y Cond) bool {
	if x.Op == MaskedEq || y.Op == MaskedEq {
		xm, xv := maskOf(x)
		ym, yv := maskOf(y)
		if xm == 0 || ym == 0 {
			return false // a range or ne: not compared bitwise here
		}
		return (xv^yv)&xm&ym != 0
	}
	if x.Op == Ne || y.Op == Ne {
		return x.Op == Eq && y.Value == x.Value || y.Op == Eq && x.Value == y.Value
	}
	xl, xh, okx := interval(x)
	yl, yh, oky := interval(y)
	return okx && oky && (xh < yl || yh < xl)
}

// maskOf is the bits an eq or masked_eq condition fixes, and their value.
func maskOf(c Cond) (mask, value uint64) {
	switch c.Op {
	case MaskedEq:
		return c.Mask, c.Value & c.Mask
	case Eq:
		return ^uint64(0), c.Value
	}
	return 0, 0
}

// interval is the values an eq, lt, le, gt or ge condition lets through.
func interval(c Cond) (lo, hi uint64, ok bool) {
	const max = ^uint64(0)
	switch c.Op {
	case Eq:
		return c.Value, c.Value, true
	case Lt:
		if c.Value == 0 {
			return 1, 0, true // empty
		}
		return 0, c.Value - 1, true
	case Le:
		return 0, c.Value, true
	case Gt:
		if c.Value == max {
			return 1, 0, true
		}
		return c.Value + 1, max, true
	case Ge:
		return c.Value, max, true
	}
	return 0, 0, false
}

func condString(conds []Cond) string {
	s := ""
	for i, c := range conds {
		if i > 0 {
			s += " && "
		}
		if c.Op == MaskedEq {
			s += fmt.Sprintf("arg%d & %#x == %#x", c.Index, c.Mask, c.Value)
		} else {
			s += fmt.Sprintf("arg%d %v %#x", c.Index, c.Op, c.Value)
		}
	}
	return "(" + s + ")"
}

// RuleProblems reports the rules that would compile other than they read
// (see resolve), and what would refuse a call jail itself makes between
// loading the filter and the command's exec (Needed), for the profile
// loader to place in their files. A RuleError's Rule is -1 for the
// policy's default.
func (p *Policy) RuleProblems() []error {
	if p.None {
		return nil
	}
	rules, errs := p.resolve()
	if len(errs) > 0 {
		return errs
	}
	for _, name := range Needed {
		var mine []effective
		for _, r := range rules {
			if r.name == name {
				mine = append(mine, r)
			}
		}
		if rule, ok := lets(p.Default, mine); !ok {
			errs = append(errs, &RuleError{Rule: rule, Other: -1, Err: fmt.Errorf(
				"%s: the policy refuses it, for some or all calls, and jail itself needs it once the filter is loaded; allow it (a rule without conditions)", name)})
		}
	}
	return errs
}

// Needed are the syscalls jail makes under the filter before the command
// runs: sendmsg hands the filter's listener to jail (refused, the handed
// calls would wait for an answer that never comes), read waits for PID 1
// to finish the root, chdir enters the working directory, execve starts
// the command, exit and exit_group end it. A policy must allow them.
var Needed = []string{"sendmsg", "read", "chdir", "execve", "exit", "exit_group"}

// lets says whether a syscall with these resolved rules is let through
// whatever its arguments; if not, rule is the rule to blame (-1: the
// default).
func lets(def Action, rules []effective) (rule int, ok bool) {
	through := func(a Action) bool { return a.Kind == Allow || a.Kind == Log }
	for _, r := range rules {
		if !through(r.action) {
			return r.rule, false
		}
	}
	if through(def) {
		return -1, true
	}
	for _, r := range rules {
		if len(r.conds) == 0 {
			return -1, true
		}
	}
	if len(rules) > 0 {
		return rules[0].rule, false // allowed only under conditions
	}
	return -1, false
}

// Refuses says whether the policy refuses every call of the syscall name,
// whatever its arguments: what jail.NewPlan asks before a jail may go on
// in the caller's session keyring (its command must not be able to use
// it). A policy it cannot resolve refuses nothing it can vouch for.
func (p *Policy) Refuses(name string) bool {
	if p.None {
		return false
	}
	rules, errs := p.resolve()
	if len(errs) > 0 {
		return false
	}
	through := func(a Action) bool { return a.Kind == Allow || a.Kind == Log }
	unconditional := false
	for _, r := range rules {
		if r.name != name {
			continue
		}
		if through(r.action) {
			return false
		}
		unconditional = unconditional || len(r.conds) == 0
	}
	return !through(p.Default) || unconditional
}
