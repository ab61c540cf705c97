package profiles

// Loading seccomp policies: finding one by name (built-in, or NAME.toml in a
// search directory's seccomp/), following its extends and merging it, and
// resolving what a profile's [seccomp] table says into the policy a run
// loads.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"jail/seccomp"
)

// policyDir is where policies live: in the embedded built-ins, and under
// each search directory.
const policyDir = "seccomp"

// LoadPolicy finds, validates and resolves a seccomp policy by name, as a
// profile's `policy = NAME` would: a built-in's name always means the
// built-in; other names are NAME.toml in the seccomp/ subdirectory of each
// of opts.SearchPath's directories, the first found winning. Its extends
// chain is merged (the parents' rules first, the child's default winning);
// groups stay unexpanded. "none" is the policy of no filter at all.
func LoadPolicy(name string, opts Options) (*seccomp.Policy, error) {
	if err := checkPolicyRef(name); err != nil {
		return nil, fmt.Errorf("seccomp policy %q: %w", name, err)
	}
	p, err := finder{opts: opts}.policy(name)
	var probs Errors
	if errors.As(err, &probs) {
		return nil, probs // file:line:col first on each line, as Load's
	}
	if err != nil {
		return nil, fmt.Errorf("load seccomp policy: %w", err)
	}
	return p, nil
}

// ListPolicies returns every seccomp policy LoadPolicy can find, sorted by
// name, "none" included. A name found more than once is listed once, as
// LoadPolicy would find it.
func ListPolicies(opts Options) ([]Entry, error) {
	f := finder{opts: opts}
	entries, err := f.policyEntries()
	if err != nil {
		return nil, err
	}
	for i, e := range entries {
		if e.Name == policyNone {
			entries[i].Description = "no syscall filter at all: only for a profile that says so"
			continue
		}
		src, err := f.findPolicy(e.Name, nil)
		var layers []*layer
		if err == nil {
			var probs Errors
			if layers, probs = f.follow(src, policyFile); len(probs) > 0 {
				err = probs
			}
		}
		if err == nil {
			_, err = mergedPolicy(e.Name, layers, nil)
		}
		if err != nil {
			first, _, _ := strings.Cut(err.Error(), "\n")
			entries[i].Description = "does not load: " + first
			continue
		}
		// A policy's description is its own, not inherited.
		entries[i].Description = layers[0].policy.description
	}
	return entries, nil
}

// policyEntries lists the policies by name, without loading them.
func (f finder) policyEntries() ([]Entry, error) {
	out := []Entry{{Name: policyNone, Source: "built-in"}}
	seen := map[string]bool{policyNone: true}
	for _, name := range builtinPolicyNames() {
		seen[name] = true
		out = append(out, Entry{Name: name, Source: "built-in"})
	}
	for _, dir := range f.opts.SearchPath {
		dir = filepath.Join(dir, policyDir)
		files, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list seccomp policies: %w", err)
		}
		for _, file := range files {
			name, ok := strings.CutSuffix(file.Name(), ".toml")
			if !ok || file.IsDir() || !validName(name) || seen[name] {
				continue
			}
			seen[name] = true
			out = append(out, Entry{Name: name, Source: filepath.Join(dir, file.Name())})
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// builtinPolicyNames lists the embedded policies, sorted.
func builtinPolicyNames() []string {
	files, _ := builtins.ReadDir(policyDir)
	var names []string
	for _, file := range files {
		if name, ok := strings.CutSuffix(file.Name(), ".toml"); ok && !file.IsDir() && validName(name) && name != policyNone {
			names = append(names, name)
		}
	}
	return names
}

// findPolicy resolves a policy's name, as a profile names it (from nil) or
// as the policy file from extends it.
func (f finder) findPolicy(name string, from *layer) (source, error) {
	if err := checkPolicyParent(name); err != nil {
		return source{}, fmt.Errorf("%q: %w", name, err)
	}
	file := policyDir + "/" + name + ".toml"
	if data, err := builtins.ReadFile(file); err == nil {
		return source{file: "built-in/" + file, id: "built-in:" + file, data: data, decoded: builtinPolicyLayers[name]}, nil
	}
	for _, dir := range f.opts.SearchPath {
		path := filepath.Join(dir, policyDir, name+".toml")
		src, err := f.read(path, path, "seccomp policy")
		if errors.Is(err, fs.ErrNotExist) || err == nil && from != nil && src.id == from.id {
			continue
		}
		return src, err
	}
	var names []string
	entries, _ := f.policyEntries() // the message lists what it can
	for _, e := range entries {
		names = append(names, e.Name)
	}
	where := "the built-ins"
	if len(f.opts.SearchPath) > 0 {
		var dirs []string
		for _, dir := range f.opts.SearchPath {
			dirs = append(dirs, filepath.Join(dir, policyDir))
		}
		where = strings.Join(dirs, ", ") + " and the built-ins"
	}
	return source{}, fmt.Errorf("no seccomp policy %q in %s; policies: %s", name, where, strings.Join(names, ", "))
}

// policy resolves a policy by name: its file and those it extends, merged.
// Problems in the files are Errors; a policy not found is a plain error.
func (f finder) policy(name string) (*seccomp.Policy, error) {
	if name == policyNone {
		return &seccomp.Policy{Name: policyNone, None: true}, nil
	}
	src, err := f.findPolicy(name, nil)
	if err != nil {
		return nil, err
	}
	layers, probs := f.follow(src, policyFile)
	if len(probs) > 0 {
		return nil, probs
	}
	return mergedPolicy(name, layers, nil)
}

// msgNoDefault says what a policy without a default action lacks: failing
// open or closed is the policy's most important choice, so it is never
// guessed.
const msgNoDefault = `required: the action for syscalls no rule names: "allow" for a denylist, or { errno = "EPERM" } for an allowlist`

// mergedPolicy folds a policy chain (child first) into one policy named
// name: the parents' rules come first, so a child's rule for the same call
// wins, and the nearest default wins. inline, when set, is the profile
// layer whose [seccomp] table is the chain's child.
func mergedPolicy(name string, layers []*layer, inline *layer) (*seccomp.Policy, error) {
	// Each policy, child first, with the layer that writes it and the key
	// of its rules there.
	type def struct {
		*policyDef
		l    *layer
		base string
	}
	defs := make([]def, 0, len(layers)+1)
	if inline != nil {
		defs = append(defs, def{inline.policy, inline, "seccomp.rule"})
	}
	for _, l := range layers {
		defs = append(defs, def{l.policy, l, "rule"})
	}
	p := &seccomp.Policy{Name: name}
	hasDefault := false
	type origin struct {
		l   *layer
		key string
	}
	var origins []origin // of each of p.Rules
	var dflt origin      // of p.Default
	for i := len(defs) - 1; i >= 0; i-- {
		d := defs[i]
		if d.dflt != nil {
			p.Default, hasDefault = *d.dflt, true
			dflt = origin{d.l, strings.TrimSuffix(d.base, "rule") + "default"}
		}
		p.Rules = append(p.Rules, d.rules...) // the layers are this load's own
		for j := range d.rules {
			origins = append(origins, origin{d.l, indexKey(d.base, j+1)})
		}
	}
	if !hasDefault {
		if inline != nil {
			return nil, Errors{inline.problem("seccomp.default", msgNoDefault)}
		}
		prob := layers[0].problem("default", msgNoDefault)
		if prob.Line == 0 {
			prob.Line, prob.Col = 1, 1 // a key that is missing has no place of its own
		}
		return nil, Errors{prob}
	}
	// Rules the filter would compile other than they read, each placed in
	// the file that writes it.
	var probs Errors
	for _, err := range p.RuleProblems() {
		var re *seccomp.RuleError
		if errors.As(err, &re) && re.Rule < 0 {
			probs = append(probs, dflt.l.problem(dflt.key, re.Err.Error()))
		} else if errors.As(err, &re) && re.Rule < len(origins) {
			o, msg := origins[re.Rule], re.Err.Error()
			if re.Other >= 0 && re.Other < len(origins) {
				e := origins[re.Other]
				line, _ := e.l.locator().find(e.key)
				msg += fmt.Sprintf(" (the earlier rule: %s:%d %s)", e.l.file, line, e.key)
			}
			probs = append(probs, o.l.problem(o.key, msg))
		} else {
			probs = append(probs, defs[0].l.problem(defs[0].base, err.Error()))
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return p, nil
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
		pol, err := f.policy(policyDefault)
		if err != nil {
			return nil, located(layers[0], "seccomp", err)
		}
		p.Seccomp.resolved = pol
		return p, nil
	}
	l := layers[i]
	sc := Seccomp{Audit: p.Seccomp.Audit, Quiet: p.Seccomp.Quiet}
	switch {
	case l.policy != nil:
		var err error
		if sc.Inline, err = f.inline(l); err != nil {
			return nil, located(l, "seccomp.extends", err)
		}
	case l.p.Seccomp.OCI != "":
		path, pol, warnings, err := f.oci(l)
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
	return Errors{l.problem(key, err.Error())}
}

// inline resolves the policy a profile's [seccomp] table writes, merged
// over the policy it extends.
func (f finder) inline(l *layer) (*seccomp.Policy, error) {
	var layers []*layer
	if name := l.policy.extends; name != "" {
		src, err := f.findPolicy(name, nil)
		if err != nil {
			return nil, err
		}
		var probs Errors
		if layers, probs = f.follow(src, policyFile); len(probs) > 0 {
			return nil, probs
		}
	}
	return mergedPolicy(inlineName, layers, l)
}

// oci reads and imports the OCI seccomp profile a [seccomp] table names,
// with the checks a profile file gets; a relative path starts from the
// profile's directory. It returns the absolute path, the policy, and what
// the import skipped or changed.
func (f finder) oci(l *layer) (string, *seccomp.Policy, []string, error) {
	path := l.p.Seccomp.OCI
	if !filepath.IsAbs(path) {
		if l.dir == "" {
			return "", nil, nil, fmt.Errorf("%q: a built-in profile imports only absolute paths", path)
		}
		path = filepath.Join(l.dir, path)
	}
	path = filepath.Clean(path)
	src, err := f.read(path, path, "OCI seccomp profile")
	if err != nil {
		return "", nil, nil, err
	}
	pol, warnings, err := seccomp.ImportOCI(src.data, runtime.GOARCH)
	if err == nil {
		err = errors.Join(pol.RuleProblems()...)
	}
	if err != nil {
		return "", nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	pol.Name = ociPrefix + path
	return path, pol, warnings, nil
}
