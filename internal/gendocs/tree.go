package gendocs

// The CLI's commands and flags, read from the urfave/cli definition into
// the one shape every writer walks.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// node is one command: jail itself (path "") or a subcommand.
type node struct {
	path  string   // "", "run", "profile show"
	names []string // its name, then its aliases
	usage string   // one line
	text  string   // the usage text: synopsis, then examples
	flags []flag
	subs  []*node
	args  Kind // what its arguments complete to
}

// flag is one flag of a command.
type flag struct {
	names       []string // as the CLI lists them: the name, then aliases
	usage       string   // the placeholder's quotes removed
	placeholder string   // "" for a flag that takes no value
	def         string   // its default, "" for none
	kind        Kind     // what its value completes to
}

// helpFlag is the flag urfave/cli gives every command.
func helpFlag() flag {
	return flag{names: []string{"help", "h"}, usage: "show help"}
}

// tree reads the app, which must have been set up (App.Setup adds the help
// command). A Values or Args entry naming no flag or command is an error,
// so a renamed flag cannot leave a completion behind.
func tree(s Spec) (*node, error) {
	values := map[string]bool{}
	root, err := readNode(s, "", []string{s.App.Name}, s.App.Usage, s.App.UsageText, s.App.Flags, s.App.Commands, values)
	if err != nil {
		return nil, err
	}
	for name := range s.Values {
		if !values[name] {
			return nil, fmt.Errorf("completion kind for --%s: no such flag", name)
		}
	}
	paths := map[string]bool{}
	root.walk(func(n *node) { paths[n.path] = true })
	for path := range s.Args {
		if !paths[path] {
			return nil, fmt.Errorf("argument kind for %q: no such command", path)
		}
	}
	return root, nil
}

func readNode(s Spec, path string, names []string, usage, text string, flags []cli.Flag, cmds []*cli.Command, values map[string]bool) (*node, error) {
	n := &node{path: path, names: names, usage: usage, text: text, args: s.Args[path]}
	for _, f := range flags {
		if f == cli.HelpFlag {
			continue
		}
		fl, err := readFlag(s, f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", strings.TrimSpace("jail "+path), err)
		}
		values[fl.names[0]] = true
		n.flags = append(n.flags, fl)
	}
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		sub, err := readNode(s, strings.TrimSpace(path+" "+c.Name), c.Names(), c.Usage, c.UsageText, c.Flags, c.Subcommands, values)
		if err != nil {
			return nil, err
		}
		n.subs = append(n.subs, sub)
	}
	return n, nil
}

func readFlag(s Spec, f cli.Flag) (flag, error) {
	d, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return flag{}, fmt.Errorf("flag %v: no usage to document", f.Names())
	}
	if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
		return flag{}, fmt.Errorf("flag %v is hidden: hidden flags are not documented", f.Names())
	}
	placeholder, usage := unquote(d.GetUsage())
	fl := flag{names: f.Names(), usage: usage}
	if d.TakesValue() {
		if placeholder == "" {
			placeholder = "VALUE"
		}
		fl.placeholder = placeholder
		fl.def = d.GetDefaultText()
		fl.kind = guessKind(placeholder)
	}
	if k, ok := s.Values[fl.names[0]]; ok {
		if !d.TakesValue() {
			return flag{}, fmt.Errorf("completion kind for --%s, which takes no value", fl.names[0])
		}
		fl.kind = k
	}
	return fl, nil
}

// unquote is a flag's usage without the backquotes around its value's
// placeholder, and the placeholder, as the CLI's help shows them.
func unquote(usage string) (placeholder, text string) {
	before, rest, ok := strings.Cut(usage, "`")
	if !ok {
		return "", usage
	}
	placeholder, after, ok := strings.Cut(rest, "`")
	if !ok {
		return "", usage
	}
	return placeholder, before + placeholder + after
}

// guessKind is what a value completes to by its placeholder: files and
// directories; anything else, nothing unless Spec.Values says.
func guessKind(placeholder string) Kind {
	switch {
	case placeholder == "DIR":
		return Dir
	case placeholder == "FILE" || placeholder == "PATH" || strings.HasPrefix(placeholder, "SRC"):
		return File
	}
	return None
}

// walk calls fn on n and every command under it, depth first.
func (n *node) walk(fn func(*node)) {
	fn(n)
	for _, s := range n.subs {
		s.walk(fn)
	}
}

// spellings are a flag's spellings on the command line: --name, -n.
func (f flag) spellings() []string {
	var out []string
	for _, n := range f.names {
		if len(n) == 1 {
			out = append(out, "-"+n)
		} else {
			out = append(out, "--"+n)
		}
	}
	return out
}

// allFlags are a command's flags and the help flag every command has.
func (n *node) allFlags() []flag {
	return append(slices.Clip(n.flags), helpFlag())
}

// valued are the spellings of a command's flags that take a value, sorted.
func (n *node) valued() []string {
	var out []string
	for _, f := range n.flags {
		if f.placeholder != "" {
			out = append(out, f.spellings()...)
		}
	}
	sort.Strings(out)
	return out
}

// kinds are the completion kind of every flag that has one, by spelling,
// sorted; the same flag name has one kind everywhere.
func kinds(root *node) ([][2]string, error) {
	byName := map[string]Kind{}
	var err error
	root.walk(func(n *node) {
		for _, f := range n.flags {
			if f.kind == None {
				continue
			}
			for _, sp := range f.spellings() {
				if k, ok := byName[sp]; ok && k != f.kind && err == nil {
					err = fmt.Errorf("%s completes to %s in one command and %s in another", sp, k, f.kind)
				}
				byName[sp] = f.kind
			}
		}
	})
	var out [][2]string
	for sp, k := range byName {
		out = append(out, [2]string{sp, string(k)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out, err
}
