package searchpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jail-sandbox/jail/internal/testfiles"
	"github.com/jail-sandbox/jail/internal/tomlstrict"
)

func TestSearch(t *testing.T) {
	first := testfiles.Write(t, map[string]string{"sub/a.toml": "1", "sub/.hidden.toml": "", "sub/notes.txt": ""})
	second := testfiles.Write(t, map[string]string{"sub/a.toml": "2", "sub/b.toml": "3"})
	f := Finder{Options: Options{SearchPath: []string{first, second}}, Files: map[string]fs.FileInfo{}}

	src, err := f.Search("sub", "a", "thing", nil)
	if err != nil || string(src.Data) != "1" || src.ID != filepath.Join(first, "sub/a.toml") || src.Dir != filepath.Join(first, "sub") {
		t.Errorf("Search(a) = %+v, %v; want the first directory's", src, err)
	}
	if src, err := f.Search("sub", "a", "thing", &src); err != nil || string(src.Data) != "2" {
		t.Errorf("Search(a) from the first a = %+v, %v; want the next one", src, err)
	}
	if fi := f.Files[filepath.Join(first, "sub/b.toml")]; fi != nil {
		t.Error("a file looked for and absent is not noted as absent")
	}
	if _, err := f.Search("sub", "c", "thing", nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Search(c) = %v, want fs.ErrNotExist", err)
	}

	seen := map[string]bool{"b": true}
	entries, err := f.List("sub", "things", seen)
	if err != nil || len(entries) != 1 || entries[0] != (Entry{Name: "a", Source: filepath.Join(first, "sub/a.toml")}) || !seen["a"] {
		t.Errorf("List = %+v, %v", entries, err)
	}
	err = f.NotFound("thing", "c", "sub", "things", []Entry{{Name: "a"}, {Name: "b"}})
	want := fmt.Sprintf(`no thing "c" in %s, %s and the built-ins; things: a, b`, filepath.Join(first, "sub"), filepath.Join(second, "sub"))
	if err == nil || err.Error() != want {
		t.Errorf("NotFound = %v, want %s", err, want)
	}
	if err := (Finder{}).NotFound("thing", "c", "", "things", nil); err.Error() != `no thing "c" in the built-ins; things: ` {
		t.Errorf("NotFound without a search path = %v", err)
	}
}

func TestRead(t *testing.T) {
	dir := testfiles.Write(t, map[string]string{"ok.toml": "x", "big.toml": strings.Repeat("#", maxFileSize+1), "open.toml": ""})
	if err := os.Chmod(filepath.Join(dir, "open.toml"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.toml"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"big.toml":  "larger than 1048576 bytes",
		"open.toml": "is writable by group or others (mode 0666): chmod go-w it",
		"fifo.toml": "not a regular file",
		"none.toml": "no such file or directory",
	} {
		path := filepath.Join(dir, name)
		if _, err := (Finder{}).Read(path, name, "thing"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Read(%s) = %v, want %q", name, err, want)
		}
	}
	if src, err := (Finder{}).Read(filepath.Join(dir, "ok.toml"), "shown", "thing"); err != nil || src.File != "shown" || string(src.Data) != "x" {
		t.Errorf("Read(ok) = %+v, %v", src, err)
	}
}

// layer is a file of a test language whose text is what it extends.
type layer struct {
	*tomlstrict.Doc
	extends string
}

func (l layer) Extends() string { return l.extends }

func TestFollow(t *testing.T) {
	files := map[string]string{"a": "b", "b": "c", "c": "", "x": "y", "y": "x", "m": "zz", "bad": ""}
	for i := range 10 {
		files[fmt.Sprint("d", i)] = fmt.Sprint("d", i+1)
	}
	load := func(src Source) (layer, tomlstrict.Errors, bool) {
		if src.File == "bad" {
			return layer{}, tomlstrict.Errors{{File: "bad", Msg: "not TOML"}}, false
		}
		return layer{tomlstrict.NewDoc(src.File, nil), string(src.Data)}, nil, true
	}
	find := func(ref string, from *Source) (Source, error) {
		text, ok := files[ref]
		if !ok {
			return Source{}, fmt.Errorf("no %q", ref)
		}
		return Source{File: ref, ID: ref, Data: []byte(text)}, nil
	}
	for name, want := range map[string]string{
		"a":   "a b c | ",
		"x":   "x y | y: extends: cycle: x extends y extends x",
		"m":   `m | m: extends: no "zz"`,
		"bad": " | bad: not TOML",
		"d0":  "d0 d1 d2 d3 d4 d5 d6 d7 d8 | d8: extends: more than 8 things extend one another",
	} {
		src, _ := find(name, nil)
		layers, probs := Follow(src, "things", load, find)
		var got []string
		for _, l := range layers {
			got = append(got, l.File)
		}
		if g := strings.Join(got, " ") + " | " + probs.Error(); g != want {
			t.Errorf("Follow(%s) = %q, want %q", name, g, want)
		}
	}
}
