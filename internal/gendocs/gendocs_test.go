package gendocs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// testSpec is a small CLI in jail's shape: flags on the app, a command
// with a subcommand whose argument is a profile.
func testSpec() Spec {
	app := &cli.App{
		Name:      "jail",
		Usage:     "run one command",
		UsageText: "jail [-p PROFILE] -- CMD\n\nExample:\n   jail -- true\n.not a macro",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, Value: "default", Usage: "profile `NAME`"},
			&cli.StringFlag{Name: "workspace", Usage: "bind `DIR` at /workspace"},
			&cli.BoolFlag{Name: "quiet", Usage: "say less"},
		},
		Commands: []*cli.Command{
			{Name: "profile", Usage: "inspect a profile", Subcommands: []*cli.Command{
				{Name: "show", Usage: "print a profile", UsageText: "jail profile show NAME",
					Flags: []cli.Flag{&cli.StringFlag{Name: "workspace", Usage: "bind `DIR` at /workspace"}}},
			}},
			{Name: "hidden", Hidden: true},
		},
	}
	app.Setup()
	return Spec{App: app, Version: "v1", Date: "2026-01-02", Binary: "/usr/bin/jail",
		Values: map[string]Kind{"profile": Profile},
		Args:   map[string]Kind{"profile show": Profile, "": Command}}
}

// TestTreeRefusesStale: a completion kind for a flag or command the CLI
// no longer has, or for a flag that takes no value, is an error, not a
// completion that silently never fires.
func TestTreeRefusesStale(t *testing.T) {
	for name, edit := range map[string]func(*Spec){
		"flag":     func(s *Spec) { s.Values["gone"] = File },
		"command":  func(s *Spec) { s.Args["profile gone"] = Profile },
		"no value": func(s *Spec) { s.Values["quiet"] = File },
	} {
		s := testSpec()
		edit(&s)
		if _, err := tree(s); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := tree(testSpec()); err != nil {
		t.Fatal(err)
	}
}

// TestManRenders: groff reads the page without a warning; options keep
// their minus signs; a usage line that starts with "." stays text; hidden
// commands are left out.
func TestManRenders(t *testing.T) {
	page, err := Man(testSpec())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".TH JAIL 1 \"2026\\-01\\-02\" \"jail v1\"", `\fB\-\-profile\fR, \fB\-p\fR \fINAME\fR`, "\n\\&.not a macro\n", ".SS \"jail profile show\""} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "hidden") {
		t.Errorf("the page documents a hidden command:\n%s", page)
	}
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("no groff (Debian: groff-base) to render the page with")
	}
	cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z")
	cmd.Stdin = strings.NewReader(page)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("groff: %v\n%s", err, out)
	}
}

// TestBashCompletes runs the generated completion in bash: subcommands,
// a flag's value by its kind, a subcommand's own flags, and the profile
// names asked of the binary being completed (here a script).
func TestBashCompletes(t *testing.T) {
	script, err := Bash(testSpec())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "jail.bash")
	fake := filepath.Join(dir, "jail")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	// A jail whose `jail profiles` lists two profiles.
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n[ \"$1\" = profiles ] && printf 'agent   for agents\\nmine  /etc/jail/profiles/mine.toml\\n'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "wsdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"pro"}, "profile"},
		{[]string{"profile", ""}, "show"},
		{[]string{"-p", ""}, "mine"},
		{[]string{"--profile", "=", "a"}, "agent"},
		{[]string{"profile", "show", ""}, "agent"},
		{[]string{"profile", "show", "--w"}, "--workspace"},
		{[]string{"--workspace", "ws"}, "wsdir"},
		{[]string{"--q"}, "--quiet"},
	} {
		words := append([]string{fake}, tc.words...)
		args := append([]string{"--norc", "--noprofile", "-c",
			`. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _jail; printf '%s\n' "${COMPREPLY[@]}"`,
			"bash", file}, words...)
		cmd := exec.Command("bash", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains("\n"+string(out), "\n"+tc.want+"\n") {
			t.Errorf("%q: %v\n%s", tc.words, err, out)
		}
	}
}

// TestAppArmorOutput: Write puts setup's profile for the binary where the
// package installs it.
func TestAppArmorOutput(t *testing.T) {
	dir := t.TempDir()
	if err := Write(testSpec(), dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "etc/apparmor.d/jail"))
	if err != nil || !strings.Contains(string(b), "profile jail \"/usr/bin/jail\" flags=(unconfined) {\n  userns,\n") {
		t.Errorf("%v\n%s", err, b)
	}
	for _, f := range []string{"usr/share/man/man1/jail.1", "usr/share/bash-completion/completions/jail", "usr/share/zsh/vendor-completions/_jail", "usr/share/fish/vendor_completions.d/jail.fish"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
