package seccomp

// #include "seccomp/sc.h"
import "C"

import (
	"fmt"
	"strings"
)

// ActionKind is what the filter does with a matching syscall. The names are
// the policy language's, after the OCI vocabulary (SCMP_ACT_*).
type ActionKind int

// The actions a policy can take.
const (
	Allow       ActionKind = iota + 1 // let it run
	Errno                             // fail it with Action.Errno; reported
	KillProcess                       // kill the whole process (SIGSYS)
	KillThread                        // kill the calling thread
	Trap                              // deliver SIGSYS to the caller
	Log                               // let it run and log it to the kernel audit log
	Notify                            // hand it to the runner, which refuses it with EPERM; reported
)

var actionNames = map[ActionKind]string{
	Allow: "allow", Errno: "errno", KillProcess: "kill_process", KillThread: "kill_thread",
	Trap: "trap", Log: "log", Notify: "notify",
}

func (k ActionKind) String() string {
	if s, ok := actionNames[k]; ok {
		return s
	}
	return fmt.Sprintf("ActionKind(%d)", int(k))
}

// ParseActionKind reads an action's name.
func ParseActionKind(s string) (ActionKind, bool) {
	for k, n := range actionNames {
		if n == s {
			return k, true
		}
	}
	return 0, false
}

// Action is an ActionKind and, for Errno, the errno returned.
type Action struct {
	Kind  ActionKind
	Errno int // Errno: 1..4095
}

func (a Action) String() string {
	if a.Kind == Errno {
		return fmt.Sprintf("errno = %d", a.Errno)
	}
	return a.Kind.String()
}

// Op compares a syscall argument, as libseccomp and OCI do.
type Op int

// The comparisons of an argument condition. The numbers are sc.h's: the
// runner reads them from the plan to answer handed calls (notify.c).
const (
	Eq       Op = C.SC_OP_EQ
	Ne       Op = C.SC_OP_NE
	Lt       Op = C.SC_OP_LT
	Le       Op = C.SC_OP_LE
	Gt       Op = C.SC_OP_GT
	Ge       Op = C.SC_OP_GE
	MaskedEq Op = C.SC_OP_MASKED_EQ // (arg & Mask) == Value
)

var opNames = map[Op]string{Eq: "eq", Ne: "ne", Lt: "lt", Le: "le", Gt: "gt", Ge: "ge", MaskedEq: "masked_eq"}

func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// ParseOp reads a comparison's name.
func ParseOp(s string) (Op, bool) {
	for o, n := range opNames {
		if n == s {
			return o, true
		}
	}
	return 0, false
}

// Cond is one argument condition; a rule's conditions must all hold.
type Cond struct {
	Index uint // 0..5
	Op    Op
	Value uint64
	Mask  uint64 // MaskedEq only
}

// Rule applies Action to the named syscalls when all Conds hold. Names
// may be groups ("@mount"), expanded by Resolve.
type Rule struct {
	Names  []string
	Action Action
	Conds  []Cond
	// Comment says why the rule is there, for seccomp show.
	Comment string
}

// Policy is a whole filter: what happens to a syscall no rule matches, and
// the rules. A later rule for the same syscall and conditions wins.
type Policy struct {
	Name    string
	Default Action
	Rules   []Rule
	// None is the explicit absence of a filter: only a profile that says
	// seccomp = "none" gets it.
	None bool
}

// Check reports every problem with the policy's values, each naming the
// rule (1-based) and field, for the profile loader to place in its file.
func (p *Policy) Check() []error {
	var errs []error
	if p.None {
		return nil
	}
	if err := checkAction(p.Default); err != nil {
		errs = append(errs, fmt.Errorf("default: %w", err))
	}
	for i, r := range p.Rules {
		at := fmt.Sprintf("rule[%d]", i+1)
		if len(r.Names) == 0 {
			errs = append(errs, fmt.Errorf("%s.syscalls: no syscall named", at))
		}
		for _, n := range r.Names {
			if err := CheckName(n); err != nil {
				errs = append(errs, fmt.Errorf("%s.syscalls: %w", at, err))
			}
		}
		if err := checkAction(r.Action); err != nil {
			errs = append(errs, fmt.Errorf("%s.action: %w", at, err))
		}
		for j, c := range r.Conds {
			if err := checkCond(c); err != nil {
				errs = append(errs, fmt.Errorf("%s.args[%d]: %w", at, j+1, err))
			}
		}
	}
	return errs
}

func checkAction(a Action) error {
	if _, ok := actionNames[a.Kind]; !ok {
		return fmt.Errorf("unknown action %v", a.Kind)
	}
	if a.Kind == Errno && (a.Errno < 1 || a.Errno > 4095) {
		return fmt.Errorf("errno %d out of 1..4095", a.Errno)
	}
	return nil
}

func checkCond(c Cond) error {
	if c.Index > 5 {
		return fmt.Errorf("index %d: syscalls have arguments 0 to 5", c.Index)
	}
	if _, ok := opNames[c.Op]; !ok {
		return fmt.Errorf("unknown op %v", c.Op)
	}
	if c.Mask != 0 && c.Op != MaskedEq {
		return fmt.Errorf("mask given with op %v: a mask goes only with masked_eq", c.Op)
	}
	return nil
}

// CheckName accepts a syscall this build's libseccomp knows, or a group.
func CheckName(name string) error {
	if strings.HasPrefix(name, "@") {
		if _, ok := Groups[name]; !ok {
			return fmt.Errorf("unknown group %q (jail seccomp groups lists them)", name)
		}
		return nil
	}
	if !Known(name) {
		return fmt.Errorf("unknown syscall %q", name)
	}
	return nil
}
