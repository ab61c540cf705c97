package profiles

// Loading: finding a profile by name or path, following its `extends` chain
// and merging it, and listing the profiles that exist.

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// The built-in profiles and seccomp policies (seccomp/NAME.toml), embedded
// so the binary needs no files to run.
//
//go:embed minimal.toml default.toml agent.toml container.toml seccomp
var builtins embed.FS

// builtinNames lists the built-ins, least to most permissive.
var builtinNames = []string{"minimal", "default", "agent", "container"}

const (
	// maxExtends bounds an extends chain: deep enough for any real layering,
	// shallow enough that a mistake is reported rather than followed.
	maxExtends = 8
	// maxFileSize bounds a profile file, so "-p /dev/zero" fails rather than
	// reading forever.
	maxFileSize = 1 << 20
)

// Options says where Load and List look for profiles besides the built-ins.
type Options struct {
	// SearchPath is the directories searched, in order, for NAME.toml before
	// the built-ins; the first match wins. Seccomp policies are looked for
	// in each one's seccomp/ subdirectory, after the built-ins.
	SearchPath []string
}

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

// Entry is one profile or seccomp policy that exists, for `jail profiles`
// and `jail seccomp list`.
type Entry struct {
	Name        string
	Description string // the resolved description, or why it does not load
	Source      string // "built-in", or the file's path
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

// source is one profile file's bytes and identity.
type source struct {
	file string // as problems name it
	id   string // absolute path, or "built-in:NAME": the same file has one id
	dir  string // for relative extends; "" for a built-in
	data []byte
	// decoded is set for a built-in: its layer, decoded at build time.
	decoded func() *layer
}

// finder looks profiles up, and notes every file it read or looked for (nil:
// absent) in files, if set: the profile depends on them staying so.
type finder struct {
	opts  Options
	files map[string]fs.FileInfo
}

// read reads a profile file and notes what it depends on: the path as
// lstat sees it and, through a symlink, the file itself. Both are taken
// before the read: a change made while it reads shows as a change later,
// rather than being recorded as what was read.
func (f finder) read(path, name, kind string) (source, error) {
	if f.files != nil {
		abs, _ := filepath.Abs(path)
		lfi, lerr := os.Lstat(abs)
		if lerr == nil || errors.Is(lerr, fs.ErrNotExist) {
			f.files[abs] = lfi
		}
		if lfi != nil && lfi.Mode()&fs.ModeSymlink != 0 {
			if real, rerr := filepath.EvalSymlinks(abs); rerr == nil {
				rfi, _ := os.Lstat(real)
				f.files[real] = rfi
			}
		}
	}
	src, _, err := readSource(path, name, kind)
	return src, err
}

// isPath says whether a reference is a file path rather than a name.
func isPath(ref string) bool {
	return strings.Contains(ref, "/") || strings.HasSuffix(ref, ".toml")
}

// checkName accepts the names a profile file can have in a search directory.
func checkName(name string) error {
	if !validName(name) {
		return fmt.Errorf("%q is not a profile name: use letters, digits, '-', '_' and '.', or give a path", name)
	}
	return nil
}

// validName says whether name can name a file in a search directory, as
// NAME.toml: no path, no hidden file, nothing an option parser would take.
func validName(name string) bool {
	ok := name != "" && len(name) <= 64 && name[0] != '.' && name[0] != '-'
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
	}
	return ok
}

// find resolves ref, as named on the command line (from nil) or in the
// extends of from.
func (f finder) find(ref string, from *layer) (source, error) {
	if isPath(ref) {
		if from == nil || filepath.IsAbs(ref) {
			return f.read(ref, ref, "profile")
		}
		if from.dir == "" {
			return source{}, fmt.Errorf("%q: a built-in profile extends only by name", ref)
		}
		// Named for problems as the extending file was, so paths read alike.
		return f.read(filepath.Join(from.dir, ref), filepath.Join(filepath.Dir(from.file), ref), "profile")
	}
	if err := checkName(ref); err != nil {
		return source{}, err
	}
	if data, err := builtins.ReadFile(ref + ".toml"); err == nil {
		return source{file: "built-in/" + ref + ".toml", id: "built-in:" + ref, data: data, decoded: builtinLayers[ref]}, nil
	}
	for _, dir := range f.opts.SearchPath {
		path := filepath.Join(dir, ref+".toml")
		src, err := f.read(path, path, "profile")
		if errors.Is(err, fs.ErrNotExist) || err == nil && from != nil && src.id == from.id {
			continue
		}
		return src, err
	}
	var names []string
	entries, _ := f.entries() // the message lists what it can
	for _, e := range entries {
		names = append(names, e.Name)
	}
	where := "the built-ins"
	if len(f.opts.SearchPath) > 0 {
		where = strings.Join(f.opts.SearchPath, ", ") + " and the built-ins"
	}
	return source{}, fmt.Errorf("no profile %q in %s; profiles: %s", ref, where, strings.Join(names, ", "))
}

// readSource reads one profile file (or another kind: a seccomp policy, an
// OCI seccomp profile), refusing anything too large to be one, and, as ssh
// does with its configuration, one that someone other than the caller or
// root owns or can write; problems will call it name.
func readSource(path, name, kind string) (source, fs.FileInfo, error) {
	// Anything but a regular file is refused before it is opened (a
	// device's open may do something); O_NONBLOCK and the check after
	// the open cover a FIFO put there meanwhile, whose open would wait.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return source{}, nil, fmt.Errorf("read %s %s: not a regular file", kind, path)
	}
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return source{}, nil, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return source{}, nil, fmt.Errorf("read %s: %w", kind, err)
	}
	if !fi.Mode().IsRegular() {
		return source{}, nil, fmt.Errorf("read %s %s: not a regular file", kind, path)
	}
	if err := checkOwner(fi, path, kind); err != nil {
		return source{}, nil, err
	}
	data, err := io.ReadAll(io.LimitReader(file, maxFileSize+1))
	if err != nil {
		return source{}, nil, fmt.Errorf("read %s: %w", kind, err)
	}
	if len(data) > maxFileSize {
		return source{}, nil, fmt.Errorf("read %s %s: larger than %d bytes", kind, path, maxFileSize)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return source{}, nil, fmt.Errorf("read %s %s: %w", kind, path, err)
	}
	return source{file: name, id: abs, dir: filepath.Dir(abs), data: data}, fi, nil
}

// checkOwner refuses a profile file (or a policy file: kind says which)
// that belongs to another user, or that group or others may write: either
// could change a jail's policy behind the caller's back.
func checkOwner(fi fs.FileInfo, path, kind string) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s %s belongs to uid %d: jail reads only %s files owned by you or root", kind, path, st.Uid, kind)
	}
	if fi.Mode().IsRegular() && fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s %s is writable by group or others (mode %04o): chmod go-w it", kind, path, fi.Mode().Perm())
	}
	return nil
}

// fileKind is what an extends chain links: profiles, or seccomp policies.
type fileKind int

const (
	profileFile fileKind = iota
	policyFile
)

// chain decodes src and the profiles it extends, child first, collecting
// every problem in every file it reaches.
func (f finder) chain(src source) ([]*layer, Errors) {
	return f.follow(src, profileFile)
}

// follow decodes src, a file of the given kind, and the files of that kind
// it extends, child first, collecting every problem in every file it
// reaches.
func (f finder) follow(src source, kind fileKind) ([]*layer, Errors) {
	var layers []*layer
	var probs Errors
	for {
		var l *layer
		if src.decoded != nil {
			l = src.decoded()
			l.src = string(src.data) // for the locator, should a problem name it
		} else {
			decode := decodeLayer
			if kind == policyFile {
				decode = decodePolicy
			}
			var ps Errors
			l, ps = decode(src.file, src.data)
			probs = append(probs, ps...)
			if l == nil {
				return nil, probs
			}
		}
		l.id, l.dir = src.id, src.dir
		layers = append(layers, l)
		extends, find, noun := l.extends, f.find, "profiles"
		if kind == policyFile {
			extends, find, noun = l.policy.extends, f.findPolicy, "policies"
		}
		if extends == "" {
			return layers, probs
		}
		if len(layers) > maxExtends {
			probs = append(probs, l.problem("extends", fmt.Sprintf("more than %d %s extend one another", maxExtends, noun)))
			return layers, probs
		}
		next, err := find(extends, l)
		if err != nil {
			probs = append(probs, l.problem("extends", err.Error()))
			return layers, probs
		}
		if i := slices.IndexFunc(layers, func(x *layer) bool { return x.id == next.id }); i >= 0 {
			var files []string
			for _, x := range layers[i:] {
				files = append(files, x.file)
			}
			probs = append(probs, l.problem("extends", "cycle: "+strings.Join(append(files, next.file), " extends ")))
			return layers, probs
		}
		src = next
	}
}

// entries lists the profiles by name, without loading them.
func (f finder) entries() ([]Entry, error) {
	var out []Entry
	seen := map[string]bool{}
	for _, dir := range f.opts.SearchPath {
		files, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list profiles: %w", err)
		}
		for _, file := range files {
			name, ok := strings.CutSuffix(file.Name(), ".toml")
			if !ok || file.IsDir() || checkName(name) != nil || seen[name] || slices.Contains(builtinNames, name) {
				continue
			}
			seen[name] = true
			out = append(out, Entry{Name: name, Source: filepath.Join(dir, file.Name())})
		}
	}
	for _, name := range builtinNames {
		if !seen[name] {
			out = append(out, Entry{Name: name, Source: "built-in"})
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
