package policyfile

// Merging: a policy chain folded into one seccomp.Policy, each rule the
// filter would compile other than it reads reported in the file that
// writes it.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jail-sandbox/jail/internal/tomlstrict"
	"github.com/jail-sandbox/jail/seccomp"
)

// msgNoDefault says what a policy without a default action lacks: failing
// open or closed is the policy's most important choice, so it is never
// guessed.
const msgNoDefault = `required: the action for syscalls no rule names: "allow" for a denylist, or { errno = "EPERM" } for an allowlist`

// merge folds a policy chain (child first) into one policy named name: the
// parents' rules come first, so a child's rule for the same call wins, and
// the nearest default wins. inline, when set, is the profile whose
// [seccomp] table is the chain's child.
func merge(name string, layers []*layer, inline *layer) (*seccomp.Policy, error) {
	// Each policy, child first, with the key of its rules in its file.
	type def struct {
		*layer
		base string
	}
	defs := make([]def, 0, len(layers)+1)
	if inline != nil {
		defs = append(defs, def{inline, "seccomp.rule"})
	}
	for _, l := range layers {
		defs = append(defs, def{l, "rule"})
	}
	p := &seccomp.Policy{Name: name}
	hasDefault := false
	type origin struct {
		doc *tomlstrict.Doc
		key string
	}
	var origins []origin // of each of p.Rules
	var dflt origin      // of p.Default
	for i := len(defs) - 1; i >= 0; i-- {
		d := defs[i]
		if d.dflt != nil {
			p.Default, hasDefault = *d.dflt, true
			dflt = origin{d.Doc, strings.TrimSuffix(d.base, "rule") + "default"}
		}
		p.Rules = append(p.Rules, d.rules...) // the layers are this load's own
		for j := range d.rules {
			origins = append(origins, origin{d.Doc, tomlstrict.IndexKey(d.base, j+1)})
		}
	}
	if !hasDefault {
		if inline != nil {
			return nil, tomlstrict.Errors{inline.Problem("seccomp.default", msgNoDefault)}
		}
		prob := layers[0].Problem("default", msgNoDefault)
		if prob.Line == 0 {
			prob.Line, prob.Col = 1, 1 // a key that is missing has no place of its own
		}
		return nil, tomlstrict.Errors{prob}
	}
	// Rules the filter would compile other than they read, each placed in
	// the file that writes it.
	var probs tomlstrict.Errors
	for _, err := range p.RuleProblems() {
		var re *seccomp.RuleError
		if errors.As(err, &re) && re.Rule < 0 {
			probs = append(probs, dflt.doc.Problem(dflt.key, re.Err.Error()))
		} else if errors.As(err, &re) && re.Rule < len(origins) {
			o, msg := origins[re.Rule], re.Err.Error()
			if re.Other >= 0 && re.Other < len(origins) {
				e := origins[re.Other]
				line, _ := e.doc.Position(e.key)
				msg += fmt.Sprintf(" (the earlier rule: %s:%d %s)", e.doc.File, line, e.key)
			}
			probs = append(probs, o.doc.Problem(o.key, msg))
		} else {
			probs = append(probs, defs[0].Problem(defs[0].base, err.Error()))
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return p, nil
}
