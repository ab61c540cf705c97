package profiles

// Loading: finding a profile by name or path, following its `extends` chain
// and merging it, and listing the profiles that exist.

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/internal/searchpath"
	"github.com/jail-sandbox/jail/internal/tomlstrict"
)

// The built-in profiles, embedded so the binary needs no files to run.
//
//go:embed minimal.toml default.toml agent.toml container.toml
var builtins embed.FS

// builtinNames lists the built-ins, least to most permissive.
var builtinNames = []string{"minimal", "default", "agent", "container"}

// Options says where Load and List look for profiles besides the built-ins.
type Options = searchpath.Options

// Entry is one profile that exists, for `jail profiles`.
type Entry = searchpath.Entry

// DefaultSearchPath is where profiles are looked for unless the caller says
// otherwise: $JAIL_PROFILE_PATH (colon-separated), then
// $HOME/.config/jail/profiles, then /etc/jail/profiles. Relative directories
// are ignored: a profile found relative to the working directory could be
// planted by the very code the jail is meant to contain. It reads env rather
// than the process environment so callers and tests control it.
func DefaultSearchPath(env []string) []string {
	var dirs []string
	if v, ok := lookupEnv(env, "JAIL_PROFILE_PATH"); ok {
		for _, d := range strings.Split(v, ":") {
			if filepath.IsAbs(d) {
				dirs = append(dirs, filepath.Clean(d))
			}
		}
	}
	if home, ok := lookupEnv(env, "HOME"); ok && filepath.IsAbs(home) {
		dirs = append(dirs, filepath.Join(home, ".config", "jail", "profiles"))
	}
	return append(dirs, "/etc/jail/profiles")
}

// Load finds, validates and resolves a profile. A value containing '/' or
// ending in ".toml" is a file path; anything else is a name: a built-in's
// name always means the built-in (a file in the search path cannot replace
// it, so nothing that can write there — a jail whose workspace holds it —
// can change what "agent" means); other names are looked up as NAME.toml in
// opts.SearchPath. Its `extends` chain is followed (a name by the same
// lookup, a relative path from the extending file's directory) and merged.
// Every problem in every file of the chain is reported at once, as Errors.
func Load(nameOrPath string, opts Options) (*Profile, error) {
	f := finder{opts: opts, files: map[string]fs.FileInfo{}}
	src, err := f.find(nameOrPath, nil)
	if err != nil {
		return nil, fmt.Errorf("load profile: %w", err)
	}
	layers, probs := f.chain(src)
	if len(probs) > 0 {
		return nil, probs
	}
	p, probs := f.build(layers)
	if len(probs) > 0 {
		return nil, probs
	}
	p.Name = nameOrPath
	p.Files = f.files
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("profile %q: %w", nameOrPath, err)
	}
	return p, nil
}

// List returns every profile Load can find by name, sorted by name: the
// files in opts.SearchPath and the built-ins. A name found more than once is
// listed once, as Load would find it.
func List(opts Options) ([]Entry, error) {
	entries, err := finder{opts: opts}.entries()
	if err != nil {
		return nil, err
	}
	for i, e := range entries {
		p, err := Load(e.Name, opts)
		if err != nil {
			first, _, _ := strings.Cut(err.Error(), "\n")
			entries[i].Description = "does not load: " + first
			continue
		}
		entries[i].Description = p.Description
	}
	return entries, nil
}

// finder looks profiles up, and notes every file it read or looked for (nil:
// absent) in files, if set: the profile depends on them staying so.
type finder struct {
	opts  Options
	files map[string]fs.FileInfo
}

func (f finder) search() searchpath.Finder {
	return searchpath.Finder{Options: f.opts, Files: f.files}
}

// isPath says whether a reference is a file path rather than a name.
func isPath(ref string) bool {
	return strings.Contains(ref, "/") || strings.HasSuffix(ref, ".toml")
}

// checkName accepts the names a profile file can have in a search directory.
func checkName(name string) error {
	if !searchpath.ValidName(name) {
		return fmt.Errorf("%q is not a profile name: use letters, digits, '-', '_' and '.', or give a path", name)
	}
	return nil
}

// find resolves ref, as named on the command line (from nil) or in the
// extends of the file from.
func (f finder) find(ref string, from *searchpath.Source) (searchpath.Source, error) {
	if isPath(ref) {
		if from == nil || filepath.IsAbs(ref) {
			return f.search().Read(ref, ref, "profile")
		}
		if from.Dir == "" {
			return searchpath.Source{}, fmt.Errorf("%q: a built-in profile extends only by name", ref)
		}
		// Named for problems as the extending file was, so paths read alike.
		return f.search().Read(filepath.Join(from.Dir, ref), filepath.Join(filepath.Dir(from.File), ref), "profile")
	}
	if err := checkName(ref); err != nil {
		return searchpath.Source{}, err
	}
	if data, err := builtins.ReadFile(ref + ".toml"); err == nil {
		return searchpath.Source{File: "built-in/" + ref + ".toml", ID: "built-in:" + ref, Data: data}, nil
	}
	src, err := f.search().Search("", ref, "profile", from)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return src, err
	}
	entries, _ := f.entries() // the message lists what it can
	return searchpath.Source{}, f.search().NotFound("profile", ref, "", "profiles", entries)
}

// chain decodes src and the profiles it extends, child first, collecting
// every problem in every file it reaches.
func (f finder) chain(src searchpath.Source) ([]*layer, Errors) {
	return searchpath.Follow(src, "profiles", load, f.find)
}

// load decodes one profile file; a built-in was decoded at build time.
func load(src searchpath.Source) (*layer, Errors, bool) {
	doc := tomlstrict.NewDoc(src.File, src.Data)
	if decoded, ok := builtinLayers[src.ID]; ok {
		l := decoded()
		l.Doc = doc
		return l, nil, true
	}
	l, probs := decodeLayer(doc)
	if l == nil {
		return nil, probs, false
	}
	l.dir = src.Dir
	return l, probs, true
}

// entries lists the profiles by name, without loading them.
func (f finder) entries() ([]Entry, error) {
	seen := map[string]bool{}
	for _, name := range builtinNames {
		seen[name] = true
	}
	out, err := f.search().List("", "profiles", seen)
	if err != nil {
		return nil, err
	}
	for _, name := range builtinNames {
		out = append(out, Entry{Name: name, Source: "built-in"})
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
