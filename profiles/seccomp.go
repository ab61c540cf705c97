package profiles

// The [seccomp] table: which policy a profile runs under (a named one, one
// imported from an OCI file, or one written inline in the policy language,
// seccomp/policyfile), decoded, resolved, checked and printed.

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/internal/tomlstrict"
	"github.com/jail-sandbox/jail/seccomp"
	"github.com/jail-sandbox/jail/seccomp/policyfile"
)

// seccomp decodes a profile's [seccomp] table. It names its policy one way
// only: policy, oci, or the inline keys; a table with none of them (only
// audit) keeps the parent's.
func (d *decoder) seccomp(t map[string]any) {
	sc, set := &d.l.p.Seccomp, d.l.set
	def := &policyfile.Def{}
	var sources []string // the keys that say which policy
	inline := false
	d.Each("seccomp", t, seccompKeys, func(k, key string, v any) bool {
		switch k {
		case "policy":
			sc.Policy, _ = d.CheckedStr(key, v, checkPolicyRef)
		case "oci":
			sc.OCI, _ = d.CheckedStr(key, v, checkOCIPath)
		case "audit":
			sc.Audit, set[key] = d.Bool(key, v)
			return true
		case "report":
			report, ok := d.Bool(key, v)
			sc.Quiet, set[key] = !report, ok
			return true
		case "description":
			d.Fail(key, "only in a policy file: a profile describes itself at the top")
			return true
		default:
			if !policyfile.DecodeKey(d.Decoder, def, "seccomp", k, v) {
				return false
			}
			d.l.policy, inline = def, true
		}
		sources = append(sources, k)
		return true
	})
	if len(sources) == 0 {
		return // audit alone: the policy is the parent's
	}
	ways := 0
	for _, named := range []bool{slices.Contains(sources, "policy"), slices.Contains(sources, "oci"), inline} {
		if named {
			ways++
		}
	}
	if ways > 1 {
		slices.SortFunc(sources, func(a, b string) int {
			return slices.Index(seccompKeys, a) - slices.Index(seccompKeys, b)
		})
		d.Fail("seccomp", "give one of policy, oci or a policy inline (extends, default, rule), not %s", andList(sources))
	}
	set["seccomp"] = true
}

// checkPolicyRef checks what a profile's policy (or --seccomp) names: a
// policy, or "none".
func checkPolicyRef(s string) error { return policyfile.CheckRef(s) }

// checkOCIPath checks the path of an OCI seccomp profile: absolute, or
// relative to the profile's directory.
func checkOCIPath(s string) error {
	if err := checkTarget(s); err != nil {
		return err
	}
	if strings.HasPrefix(s, "~") {
		return errors.New("~ is not expanded here: give an absolute path, or one relative to the profile")
	}
	return nil
}

// policy resolves a policy by name, looked up where the profile was, its
// files noted among the profile's.
func (f finder) policy(name string) (*seccomp.Policy, error) {
	return policyfile.Loader{Options: f.opts, Files: f.files}.Named(name)
}

// build merges a profile's layers (child first) and resolves its seccomp
// policy, reading the policy files or OCI file it names.
func (f finder) build(layers []*layer) (*Profile, Errors) {
	p := merge(layers)
	p.opts = f.opts
	i := slices.IndexFunc(layers, func(l *layer) bool { return l.set["seccomp"] })
	if i < 0 {
		// No profile in the chain says: the default, as for a profile that
		// names it (invariant 4: never no filter by omission).
		pol, err := f.policy(policyfile.Default)
		if err != nil {
			return nil, located(layers[0], "seccomp", err)
		}
		p.Seccomp.resolved = pol
		return p, nil
	}
	l := layers[i]
	loader := policyfile.Loader{Options: f.opts, Files: f.files}
	sc := Seccomp{Audit: p.Seccomp.Audit, Quiet: p.Seccomp.Quiet}
	switch {
	case l.policy != nil:
		var err error
		if sc.Inline, err = loader.Inline(l.policy, l.Doc); err != nil {
			return nil, located(l, "seccomp.extends", err)
		}
	case l.p.Seccomp.OCI != "":
		path, pol, warnings, err := loader.OCI(l.p.Seccomp.OCI, l.dir)
		if err != nil {
			return nil, located(l, "seccomp.oci", err)
		}
		sc.OCI, sc.resolved, sc.Warnings = path, pol, warnings
	default:
		pol, err := f.policy(l.p.Seccomp.Policy)
		if err != nil {
			return nil, located(l, "seccomp.policy", err)
		}
		sc.Policy, sc.resolved = l.p.Seccomp.Policy, pol
	}
	p.Seccomp = sc
	return p, nil
}

// located returns err as problems: those it holds, or one about key in l.
func located(l *layer, key string, err error) Errors {
	var probs Errors
	if errors.As(err, &probs) {
		return probs
	}
	return Errors{l.Problem(key, err.Error())}
}

// check validates the seccomp settings held in memory: exactly one policy,
// an inline one that seccomp.Policy.Check accepts, and a named or imported
// one that was read for what the profile names now. (The policy read is not
// checked again: only the decoder, which checked every value with its
// place in its file, makes one.)
func (s *Seccomp) check() []error {
	if s.Audit && s.Quiet {
		return []error{errors.New("seccomp.report: false cannot go with audit = true, which reports every refused call")}
	}
	ways := 0
	for _, set := range []bool{s.Policy != "", s.Inline != nil, s.OCI != ""} {
		if set {
			ways++
		}
	}
	if ways != 1 {
		return []error{errors.New("seccomp: give exactly one of policy, oci or an inline policy")}
	}
	var errs []error
	switch {
	case s.Inline != nil:
		if s.Inline.Name != policyfile.InlineName || s.Inline.None {
			errs = append(errs, fmt.Errorf("seccomp: an inline policy is named %q and is a filter", policyfile.InlineName))
		}
		for _, err := range s.Inline.Check() {
			errs = append(errs, fmt.Errorf("seccomp.%w", err))
		}
	case s.OCI != "":
		if !filepath.IsAbs(s.OCI) || filepath.Clean(s.OCI) != s.OCI {
			errs = append(errs, fmt.Errorf("seccomp.oci: %q: must be absolute and clean", s.OCI))
		} else if s.resolved == nil || s.resolved.Name != policyfile.OCIPrefix+s.OCI || s.resolved.None {
			errs = append(errs, fmt.Errorf("seccomp.oci: %q was not imported: Load imports it", s.OCI))
		}
	default:
		if err := checkPolicyRef(s.Policy); err != nil {
			errs = append(errs, fmt.Errorf("seccomp.policy: %q: %w", s.Policy, err))
		} else if s.resolved == nil || s.resolved.Name != s.Policy || s.resolved.None != (s.Policy == policyfile.None) {
			errs = append(errs, fmt.Errorf("seccomp.policy: %q was not read: Load, or Apply with Overrides.Seccomp, reads it", s.Policy))
		}
	}
	return errs
}

// encode writes the [seccomp] table: a named policy by its name (jail
// seccomp show NAME prints it), an imported one by its path, an inline one
// in full, its extends already merged in.
func (s *Seccomp) encode(b *strings.Builder) {
	b.WriteString("\n[seccomp]\n")
	switch {
	case s.Inline != nil:
		fmt.Fprintf(b, "audit = %t\n", s.Audit)
		b.WriteString("# written in the profile; what it extends is merged in\n")
		policyfile.EncodeBody(b, "seccomp.", s.Inline)
	case s.OCI != "":
		b.WriteString("# imported from an OCI (Docker) seccomp profile\n")
		for _, w := range s.Warnings {
			fmt.Fprintf(b, "# import warning: %s\n", strings.ReplaceAll(w, "\n", " "))
		}
		fmt.Fprintf(b, "oci = %s\naudit = %t\n", tomlstrict.Quote(s.OCI), s.Audit)
	case s.Policy == policyfile.None:
		b.WriteString(policyfile.NoFilterWarning)
		fmt.Fprintf(b, "policy = %s\naudit = %t\n", tomlstrict.Quote(s.Policy), s.Audit)
	default:
		fmt.Fprintf(b, "# jail seccomp show %s prints its rules\n", s.Policy)
		fmt.Fprintf(b, "policy = %s\naudit = %t\n", tomlstrict.Quote(s.Policy), s.Audit)
	}
	if s.Quiet {
		b.WriteString("# refused calls answered in the kernel, NOT REPORTED (for a jail that runs jails)\nreport = false\n")
	}
}

// clonePolicy returns a deep copy, so no two holders share rules.
func clonePolicy(p *seccomp.Policy) *seccomp.Policy {
	if p == nil {
		return nil
	}
	c := *p
	c.Rules = slices.Clone(p.Rules)
	for i := range c.Rules {
		c.Rules[i].Names = slices.Clone(c.Rules[i].Names)
		c.Rules[i].Conds = slices.Clone(c.Rules[i].Conds)
	}
	return &c
}
