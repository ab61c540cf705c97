package policyfile

// Loading: finding a policy by name (built-in, or NAME.toml in a search
// directory's seccomp/), following its extends and merging the chain;
// resolving a policy written in a profile, and importing an OCI one.

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/internal/searchpath"
	"github.com/jail-sandbox/jail/internal/tomlstrict"
	"github.com/jail-sandbox/jail/seccomp"
)

// The built-in policies, embedded so the binary needs no files to run.
//
//go:embed builtin/*.toml
var builtins embed.FS

// dir is where policies live under each search directory, and what their
// built-ins' names say they are: built-in/seccomp/NAME.toml.
const dir = "seccomp"

// Options says where policies are looked for besides the built-ins: in
// each search directory's seccomp/ subdirectory.
type Options = searchpath.Options

// Entry is one policy that exists, for `jail seccomp list`.
type Entry = searchpath.Entry

// Load finds, validates and resolves a seccomp policy by name, as a
// profile's `policy = NAME` would: a built-in's name always means the
// built-in; other names are NAME.toml in the seccomp/ subdirectory of each
// of opts.SearchPath's directories, the first found winning. Its extends
// chain is merged (the parents' rules first, the child's default winning);
// groups stay unexpanded. "none" is the policy of no filter at all.
// Problems in the files are tomlstrict.Errors.
func Load(name string, opts Options) (*seccomp.Policy, error) {
	if err := CheckRef(name); err != nil {
		return nil, fmt.Errorf("seccomp policy %q: %w", name, err)
	}
	p, err := Loader{Options: opts}.Named(name)
	var probs tomlstrict.Errors
	if errors.As(err, &probs) {
		return nil, probs // file:line:col first on each line, as a profile's
	}
	if err != nil {
		return nil, fmt.Errorf("load seccomp policy: %w", err)
	}
	return p, nil
}

// List returns every seccomp policy Load can find, sorted by name, "none"
// included. A name found more than once is listed once, as Load would find
// it.
func List(opts Options) ([]Entry, error) {
	l := Loader{Options: opts}
	entries, err := l.entries()
	if err != nil {
		return nil, err
	}
	for i, e := range entries {
		if e.Name == None {
			entries[i].Description = "no syscall filter at all: only for a profile that says so"
			continue
		}
		src, err := l.find(e.Name, nil)
		var layers []*layer
		if err == nil {
			var probs tomlstrict.Errors
			if layers, probs = l.follow(src); len(probs) > 0 {
				err = probs
			}
		}
		if err == nil {
			_, err = merge(e.Name, layers, nil)
		}
		if err != nil {
			first, _, _ := strings.Cut(err.Error(), "\n")
			entries[i].Description = "does not load: " + first
			continue
		}
		// A policy's description is its own, not inherited.
		entries[i].Description = layers[0].description
	}
	return entries, nil
}

// Loader finds policies for one load of a profile: in its search path,
// noting each file it reads or looks for in Files, the profile's
// dependencies.
type Loader searchpath.Finder

// Named resolves a policy by name: its file and those it extends, merged.
// Problems in the files are tomlstrict.Errors; a policy not found is a
// plain error.
func (l Loader) Named(name string) (*seccomp.Policy, error) {
	if name == None {
		return &seccomp.Policy{Name: None, None: true}, nil
	}
	src, err := l.find(name, nil)
	if err != nil {
		return nil, err
	}
	layers, probs := l.follow(src)
	if len(probs) > 0 {
		return nil, probs
	}
	return merge(name, layers, nil)
}

// Inline resolves a policy written in a profile's [seccomp] table (def,
// decoded from doc with DecodeKey), merged over the policy it extends.
func (l Loader) Inline(def *Def, doc *tomlstrict.Doc) (*seccomp.Policy, error) {
	var layers []*layer
	if name := def.extends; name != "" {
		src, err := l.find(name, nil)
		if err != nil {
			return nil, err
		}
		var probs tomlstrict.Errors
		if layers, probs = l.follow(src); len(probs) > 0 {
			return nil, probs
		}
	}
	return merge(InlineName, layers, &layer{Doc: doc, Def: def})
}

// OCI reads and imports the OCI seccomp profile at path, with the checks a
// policy file gets; a relative path starts from dir, the profile's
// directory ("" for a built-in, which imports only absolute paths). It
// returns the absolute path, the policy, and what the import skipped or
// changed.
func (l Loader) OCI(path, dir string) (string, *seccomp.Policy, []string, error) {
	if !filepath.IsAbs(path) {
		if dir == "" {
			return "", nil, nil, fmt.Errorf("%q: a built-in profile imports only absolute paths", path)
		}
		path = filepath.Join(dir, path)
	}
	path = filepath.Clean(path)
	src, err := searchpath.Finder(l).Read(path, path, "OCI seccomp profile")
	if err != nil {
		return "", nil, nil, err
	}
	pol, warnings, err := seccomp.ImportOCI(src.Data, runtime.GOARCH)
	if err == nil {
		err = errors.Join(pol.RuleProblems()...)
	}
	if err != nil {
		return "", nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	pol.Name = OCIPrefix + path
	return path, pol, warnings, nil
}

// layer is one policy file of an extends chain, decoded.
type layer struct {
	*tomlstrict.Doc
	*Def
}

// Extends is the policy the file extends.
func (l *layer) Extends() string { return l.extends }

// follow decodes src and the policies it extends, child first.
func (l Loader) follow(src searchpath.Source) ([]*layer, tomlstrict.Errors) {
	return searchpath.Follow(src, "policies", load, l.find)
}

// load decodes one policy file; a built-in was decoded at build time.
func load(src searchpath.Source) (*layer, tomlstrict.Errors, bool) {
	doc := tomlstrict.NewDoc(src.File, src.Data)
	if decoded, ok := builtinDefs[src.ID]; ok {
		return &layer{Doc: doc, Def: decoded()}, nil, true
	}
	def, probs, ok := decodeFile(doc)
	return &layer{Doc: doc, Def: def}, probs, ok
}

// find resolves a policy's name, as a profile names it (from nil) or as
// the policy file from extends it.
func (l Loader) find(name string, from *searchpath.Source) (searchpath.Source, error) {
	if err := checkParent(name); err != nil {
		return searchpath.Source{}, fmt.Errorf("%q: %w", name, err)
	}
	file := dir + "/" + name + ".toml"
	if data, err := builtins.ReadFile("builtin/" + name + ".toml"); err == nil {
		return searchpath.Source{File: "built-in/" + file, ID: "built-in:" + file, Data: data}, nil
	}
	f := searchpath.Finder(l)
	src, err := f.Search(dir, name, "seccomp policy", from)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return src, err
	}
	entries, _ := l.entries() // the message lists what it can
	return searchpath.Source{}, f.NotFound("seccomp policy", name, dir, "policies", entries)
}

// entries lists the policies by name, without loading them.
func (l Loader) entries() ([]Entry, error) {
	out := []Entry{{Name: None, Source: "built-in"}}
	seen := map[string]bool{None: true}
	for _, name := range builtinNames() {
		seen[name] = true
		out = append(out, Entry{Name: name, Source: "built-in"})
	}
	found, err := searchpath.Finder(l).List(dir, "seccomp policies", seen)
	if err != nil {
		return nil, err
	}
	out = append(out, found...)
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// builtinNames lists the embedded policies, sorted.
func builtinNames() []string {
	files, _ := builtins.ReadDir("builtin")
	var names []string
	for _, file := range files {
		if name, ok := strings.CutSuffix(file.Name(), ".toml"); ok && !file.IsDir() && searchpath.ValidName(name) && name != None {
			names = append(names, name)
		}
	}
	return names
}
