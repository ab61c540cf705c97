package gendocs

// The man page, jail(1), in the man macros: the synopsis of every command,
// jail's own options, each command with its examples and options, then
// the sections the Spec adds (exit status, files, environment).

import (
	"fmt"
	"slices"
	"strings"
)

// Man is the man page.
func Man(s Spec) (string, error) {
	root, err := tree(s)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(`.\" Generated from jail's CLI definition by internal/gendocs: do not edit.` + "\n")
	fmt.Fprintf(&b, ".TH JAIL 1 %s %s \"User Commands\"\n", manQuote(s.Date), manQuote("jail "+s.Version))
	// Left-justified, unhyphenated: option names must read as typed.
	b.WriteString(".ad l\n.nh\n")
	fmt.Fprintf(&b, ".SH NAME\njail, jail\\-sh \\- %s\n", esc(root.usage))

	b.WriteString(".SH SYNOPSIS\n.nf\n")
	root.walk(func(n *node) {
		if n.path == "help" || len(n.subs) > 0 && n.path != "" {
			return
		}
		for _, line := range synopsis(n.text) {
			b.WriteString(esc(line) + "\n")
		}
	})
	b.WriteString(".fi\n")

	b.WriteString(".SH DESCRIPTION\n")
	fmt.Fprintf(&b, "%s.\n", esc(capitalize(root.usage)))
	writeExamples(&b, root.text)

	b.WriteString(".SH OPTIONS\n")
	writeFlags(&b, root.allFlags())

	b.WriteString(".SH COMMANDS\n")
	for _, top := range root.subs {
		if top.path == "help" {
			continue
		}
		top.walk(func(n *node) { writeCommand(&b, root, n) })
	}

	for _, sec := range s.Sections {
		fmt.Fprintf(&b, ".SH %s\n", manQuote(strings.ToUpper(sec.Title)))
		if sec.Text != "" {
			b.WriteString(esc(sec.Text) + "\n")
		}
		for _, it := range sec.Items {
			fmt.Fprintf(&b, ".TP\n%s\n%s\n", esc(it.Tag), esc(it.Text))
		}
	}
	return b.String(), nil
}

// writeCommand is one command: its line, synopsis, examples and options;
// options that are jail's own (run, profile show) are named, not repeated.
func writeCommand(b *strings.Builder, root, n *node) {
	fmt.Fprintf(b, ".SS %s\n", manQuote("jail "+n.path))
	fmt.Fprintf(b, "%s.\n", esc(capitalize(n.usage)))
	if len(n.names) > 1 {
		fmt.Fprintf(b, "Also spelled: %s.\n", esc(strings.Join(n.names[1:], ", ")))
	}
	if syn := synopsis(n.text); len(syn) > 0 && len(n.subs) == 0 {
		b.WriteString(".PP\n.RS 4\n.nf\n")
		for _, line := range syn {
			b.WriteString(esc(line) + "\n")
		}
		b.WriteString(".fi\n.RE\n")
	}
	writeExamples(b, n.text)
	if len(n.flags) == 0 {
		return
	}
	rootNames := flagNames(root.flags)
	if own := flagNames(n.flags); isSubset(own, rootNames) {
		missing := slices.DeleteFunc(slices.Clone(rootNames), func(s string) bool { return slices.Contains(own, s) })
		text := "Options: those of jail itself (OPTIONS above)"
		if len(missing) > 0 {
			text += ", but not --" + strings.Join(missing, ", --")
		}
		b.WriteString(".PP\n" + esc(text) + ".\n")
		return
	}
	b.WriteString(".PP\nOptions:\n.RS 4\n")
	writeFlags(b, n.flags)
	b.WriteString(".RE\n")
}

// writeFlags writes each flag as a tagged paragraph: its spellings and
// placeholder, its use and default.
func writeFlags(b *strings.Builder, flags []flag) {
	for _, f := range flags {
		var tag []string
		for _, sp := range f.spellings() {
			tag = append(tag, `\fB`+esc(sp)+`\fR`)
		}
		t := strings.Join(tag, ", ")
		if f.placeholder != "" {
			t += ` \fI` + esc(f.placeholder) + `\fR`
		}
		text := esc(f.usage)
		if f.def != "" {
			text += " (default: " + esc(f.def) + ")"
		}
		fmt.Fprintf(b, ".TP\n%s\n%s\n", t, text)
	}
}

// synopsis is the first paragraph of a usage text: how the command is
// typed.
func synopsis(text string) []string {
	first, _, _ := strings.Cut(text, "\n\n")
	if strings.TrimSpace(first) == "" {
		return nil
	}
	return strings.Split(first, "\n")
}

// writeExamples writes the usage text's paragraphs after the synopsis,
// verbatim (they are examples and notes laid out for a terminal).
func writeExamples(b *strings.Builder, text string) {
	_, rest, ok := strings.Cut(text, "\n\n")
	if !ok || strings.TrimSpace(rest) == "" {
		return
	}
	b.WriteString(".PP\n.nf\n")
	for _, line := range strings.Split(strings.TrimRight(rest, "\n"), "\n") {
		b.WriteString(esc(line) + "\n")
	}
	b.WriteString(".fi\n")
}

func flagNames(flags []flag) []string {
	var out []string
	for _, f := range flags {
		out = append(out, f.names[0])
	}
	return out
}

func isSubset(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// esc makes text safe in roff: backslashes and minus signs escaped (a "-"
// in an option must not become a hyphen), and a line that starts with a
// control character kept as text.
func esc(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// manQuote is one macro argument, quoted.
func manQuote(s string) string {
	return `"` + strings.ReplaceAll(esc(s), `"`, `\(dq`) + `"`
}
