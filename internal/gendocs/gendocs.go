// Package gendocs writes what the jail package installs beside the binary,
// from the CLI's own definition (urfave/cli) at build time: the man page,
// the bash, zsh and fish completions, and the AppArmor profile. It runs in
// the generator build of jail (gendocs.go in the module root, build tag
// jail_gendocs, run by make release), so none of it is linked into the
// per-call binary. This file is the entry: what is written where.
package gendocs

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/jail-sandbox/jail/setup"
)

// Kind is what a flag's value or a command's arguments complete to.
type Kind string

// The kinds of values the completions offer.
const (
	None    Kind = ""
	File    Kind = "file"
	Dir     Kind = "dir"
	Profile Kind = "profile" // a name `jail profiles` lists, or a file
	Policy  Kind = "policy"  // a name `jail seccomp list` lists
	Session Kind = "session" // an id `jail sessions list` lists
	Command Kind = "command" // a program and its arguments, after --
)

// Spec is what the CLI definition does not say by itself.
type Spec struct {
	App     *cli.App
	Version string // for the man page's footer
	Date    string // the man page's date, YYYY-MM-DD (the commit's, for a reproducible page)
	// Binary is the installed binary's path, which the AppArmor profile
	// names.
	Binary string
	// Values is what each flag's value completes to, by its long name;
	// Args, what a command's arguments do, by its path ("" for jail
	// itself, "profile show").
	Values map[string]Kind
	Args   map[string]Kind
	// Sections follow the commands in the man page: exit status, files,
	// environment.
	Sections []Section
}

// Section is one man page section: a paragraph, then items.
type Section struct {
	Title string
	Text  string
	Items []Item
}

// Item is one tagged paragraph of a section.
type Item struct{ Tag, Text string }

// output is one file Write makes: its path in the package, and its maker.
type output struct {
	path  string
	write func(Spec) (string, error)
}

// outputs are the files Write makes.
func outputs() []output {
	return []output{
		{"usr/share/man/man1/jail.1", Man},
		{"usr/share/bash-completion/completions/jail", Bash},
		{"usr/share/zsh/vendor-completions/_jail", Zsh},
		{"usr/share/fish/vendor_completions.d/jail.fish", Fish},
		{"etc/apparmor.d/jail", appArmor},
	}
}

// Write writes every file under dir, at its path in the package.
func Write(s Spec, dir string) error {
	for _, f := range outputs() {
		text, err := f.write(s)
		if err != nil {
			return fmt.Errorf("generate %s: %w", f.path, err)
		}
		out := filepath.Join(dir, f.path)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// appArmor is the profile jail setup would write for the binary.
func appArmor(s Spec) (string, error) {
	return setup.AppArmorProfile(s.Binary)
}
