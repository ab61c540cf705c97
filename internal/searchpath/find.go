// Package searchpath finds the files of jail's layered TOML languages,
// profiles and seccomp policies: by path, or by name in the directories of a
// search path; reads each with the checks a policy file needs (a regular
// file, owned by the caller or root, writable by no one else, bounded in
// size), noting it as a dependency of what is built from it; and follows a
// file's extends chain.
package searchpath

// Finding: a file by path or by name, and the names there are.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Options says where files are looked for besides the built-ins.
type Options struct {
	// SearchPath is the directories searched, in order, for NAME.toml before
	// the built-ins; the first match wins. Seccomp policies are looked for
	// in each one's seccomp/ subdirectory, after the built-ins.
	SearchPath []string
}

// Entry is one profile or seccomp policy that exists, for `jail profiles`
// and `jail seccomp list`.
type Entry struct {
	Name        string
	Description string // the resolved description, or why it does not load
	Source      string // "built-in", or the file's path
}

// Source is one file's bytes and identity.
type Source struct {
	File string // as problems name it
	ID   string // absolute path, or "built-in:NAME": the same file has one id
	Dir  string // where relative paths in it start; "" for a built-in
	Data []byte
}

// Finder looks files up for one load, and notes every file it read or
// looked for (nil: absent) in Files, if set: what is built from them
// depends on them staying so.
type Finder struct {
	Options
	Files map[string]fs.FileInfo
}

// Search looks for NAME.toml in the sub directory ("" or "seccomp") of each
// search directory, the first found winning; from, if set, is the file
// whose extends names it, which never finds itself. kind names the file in
// errors. It fails with fs.ErrNotExist when no directory has one.
func (f Finder) Search(sub, name, kind string, from *Source) (Source, error) {
	for _, dir := range f.SearchPath {
		path := filepath.Join(dir, sub, name+".toml")
		src, err := f.Read(path, path, kind)
		if errors.Is(err, fs.ErrNotExist) || err == nil && from != nil && src.ID == from.ID {
			continue
		}
		return src, err
	}
	return Source{}, fs.ErrNotExist
}

// NotFound is the error for a name in no search directory's sub and not a
// built-in: what it is, where it was looked for, and the names there are.
func (f Finder) NotFound(what, name, sub, plural string, entries []Entry) error {
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	where := "the built-ins"
	if len(f.SearchPath) > 0 {
		dirs := f.SearchPath
		if sub != "" {
			dirs = nil
			for _, dir := range f.SearchPath {
				dirs = append(dirs, filepath.Join(dir, sub))
			}
		}
		where = strings.Join(dirs, ", ") + " and the built-ins"
	}
	return fmt.Errorf("no %s %q in %s; %s: %s", what, name, where, plural, strings.Join(names, ", "))
}

// List returns the NAME.toml files in the sub directory of each search
// directory, in search order, without reading them; a name in seen is
// skipped, and each name listed is added to it, so a name is listed once,
// where Search finds it. what names the files in errors ("profiles").
func (f Finder) List(sub, what string, seen map[string]bool) ([]Entry, error) {
	var out []Entry
	for _, dir := range f.SearchPath {
		dir = filepath.Join(dir, sub)
		files, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", what, err)
		}
		for _, file := range files {
			name, ok := strings.CutSuffix(file.Name(), ".toml")
			if !ok || file.IsDir() || !ValidName(name) || seen[name] {
				continue
			}
			seen[name] = true
			out = append(out, Entry{Name: name, Source: filepath.Join(dir, file.Name())})
		}
	}
	return out, nil
}

// ValidName says whether name can name a file in a search directory, as
// NAME.toml: no path, no hidden file, nothing an option parser would take.
func ValidName(name string) bool {
	ok := name != "" && len(name) <= 64 && name[0] != '.' && name[0] != '-'
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
	}
	return ok
}
