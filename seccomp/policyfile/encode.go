package policyfile

// Encoding: a policy written back in the language, as a policy file for
// `jail seccomp show NAME`, or as the body of a profile's [seccomp] table;
// both load back to the same policy.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/tomlstrict"
	"github.com/jail-sandbox/jail/seccomp"
)

// NoFilterWarning is what show says of a policy, or a profile, without a
// filter, so nobody reads past it.
const NoFilterWarning = "# NO SECCOMP FILTER: this profile runs commands without a syscall filter\n"

// Encode writes p as a policy file that loads back to the same default and
// rules: for `jail seccomp show NAME`. The "none" policy has no such form
// and is written as a comment saying so.
func Encode(p *seccomp.Policy) []byte {
	var b strings.Builder
	if p.None {
		b.WriteString(NoFilterWarning)
		return []byte(b.String())
	}
	fmt.Fprintf(&b, "# seccomp policy %s: its extends merged in, groups as written\n", p.Name)
	EncodeBody(&b, "", p)
	return []byte(b.String())
}

// EncodeBody writes a policy's default and rules, the rules' tables under
// prefix ("seccomp." in a profile).
func EncodeBody(b *strings.Builder, prefix string, p *seccomp.Policy) {
	fmt.Fprintf(b, "default = %s\n", formatAction(p.Default))
	for _, r := range p.Rules {
		fmt.Fprintf(b, "\n[[%srule]]\n", prefix)
		names := make([]string, len(r.Names))
		for i, n := range r.Names {
			names[i] = tomlstrict.Quote(n)
		}
		fmt.Fprintf(b, "syscalls = [%s]\n", strings.Join(names, ", "))
		fmt.Fprintf(b, "action = %s\n", formatAction(r.Action))
		if r.Comment != "" {
			fmt.Fprintf(b, "comment = %s\n", tomlstrict.Quote(r.Comment))
		}
		for _, c := range r.Conds {
			fmt.Fprintf(b, "[[%srule.arg]]\n", prefix)
			fmt.Fprintf(b, "index = %d\nop = %s\nvalue = %s\n", c.Index, tomlstrict.Quote(c.Op.String()), formatArg(c.Value, false))
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
		return tomlstrict.Quote(a.Kind.String())
	}
	if name := unix.ErrnoName(syscall.Errno(a.Errno)); name != "" {
		return fmt.Sprintf("{ errno = %s }", tomlstrict.Quote(name))
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
