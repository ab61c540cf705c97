package profiles

// Encoding seccomp policies: a profile's [seccomp] table as `jail profile
// show` prints it, and a whole policy as a policy file, for `jail seccomp
// show`; both load back to the same policy.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"jail/seccomp"
)

// noFilterWarning is what show says of a profile without a filter, so
// nobody reads past it.
const noFilterWarning = "# NO SECCOMP FILTER: this profile runs commands without a syscall filter\n"

// encode writes the [seccomp] table: a named policy by its name (jail
// seccomp show NAME prints it), an imported one by its path, an inline one
// in full, its extends already merged in.
func (s *Seccomp) encode(b *strings.Builder) {
	b.WriteString("\n[seccomp]\n")
	switch {
	case s.Inline != nil:
		fmt.Fprintf(b, "audit = %t\n", s.Audit)
		b.WriteString("# written in the profile; what it extends is merged in\n")
		encodePolicyBody(b, "seccomp.", s.Inline)
	case s.OCI != "":
		b.WriteString("# imported from an OCI (Docker) seccomp profile\n")
		for _, w := range s.Warnings {
			fmt.Fprintf(b, "# import warning: %s\n", strings.ReplaceAll(w, "\n", " "))
		}
		fmt.Fprintf(b, "oci = %s\naudit = %t\n", quoteString(s.OCI), s.Audit)
	case s.Policy == policyNone:
		b.WriteString(noFilterWarning)
		fmt.Fprintf(b, "policy = %s\naudit = %t\n", quoteString(s.Policy), s.Audit)
	default:
		fmt.Fprintf(b, "# jail seccomp show %s prints its rules\n", s.Policy)
		fmt.Fprintf(b, "policy = %s\naudit = %t\n", quoteString(s.Policy), s.Audit)
	}
	if s.Quiet {
		b.WriteString("# refused calls answered in the kernel, NOT REPORTED (for a jail that runs jails)\nreport = false\n")
	}
}

// EncodePolicy writes p as a policy file that loads back to the same
// default and rules: for `jail seccomp show NAME`. The "none" policy has no
// such form and is written as a comment saying so.
func EncodePolicy(p *seccomp.Policy) []byte {
	var b strings.Builder
	if p.None {
		b.WriteString(noFilterWarning)
		return []byte(b.String())
	}
	fmt.Fprintf(&b, "# seccomp policy %s: its extends merged in, groups as written\n", p.Name)
	encodePolicyBody(&b, "", p)
	return []byte(b.String())
}

// encodePolicyBody writes a policy's default and rules, the rules' tables
// under prefix ("seccomp." in a profile).
func encodePolicyBody(b *strings.Builder, prefix string, p *seccomp.Policy) {
	fmt.Fprintf(b, "default = %s\n", formatAction(p.Default))
	for _, r := range p.Rules {
		fmt.Fprintf(b, "\n[[%srule]]\n", prefix)
		names := make([]string, len(r.Names))
		for i, n := range r.Names {
			names[i] = quoteString(n)
		}
		fmt.Fprintf(b, "syscalls = [%s]\n", strings.Join(names, ", "))
		fmt.Fprintf(b, "action = %s\n", formatAction(r.Action))
		if r.Comment != "" {
			fmt.Fprintf(b, "comment = %s\n", quoteString(r.Comment))
		}
		for _, c := range r.Conds {
			fmt.Fprintf(b, "[[%srule.arg]]\n", prefix)
			fmt.Fprintf(b, "index = %d\nop = %s\nvalue = %s\n", c.Index, quoteString(c.Op.String()), formatArg(c.Value, false))
			if c.Op == seccomp.MaskedEq {
				fmt.Fprintf(b, "mask = %s\n", formatArg(c.Mask, true))
			}
		}
	}
}

// formatAction writes an action as the policy language spells it; an
// errno by its name where this architecture has one.
func formatAction(a seccomp.Action) string {
	if a.Kind != seccomp.Errno {
		return quoteString(a.Kind.String())
	}
	if name := unix.ErrnoName(syscall.Errno(a.Errno)); name != "" {
		return fmt.Sprintf("{ errno = %s }", quoteString(name))
	}
	return fmt.Sprintf("{ errno = %d }", a.Errno)
}

// formatArg writes a value compared with an argument: small numbers in
// decimal, flags and masks in hex, and what TOML's signed integers cannot
// hold as a string.
func formatArg(n uint64, hex bool) string {
	switch {
	case n > math.MaxInt64:
		return strconv.Quote(fmt.Sprintf("%#x", n))
	case hex || n >= 0x100:
		return fmt.Sprintf("%#x", n)
	}
	return strconv.FormatUint(n, 10)
}
