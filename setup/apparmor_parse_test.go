package setup

// The AppArmor profile's syntax, checked by AppArmor's own parser as Ubuntu
// 24.04 compiles it (ABI 4.0, warnings as errors), without loading it: this
// kernel need not have AppArmor.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// defaultParser is where the Makefile's testdeps put the checking parser
// (release/apparmor-parser.sh).
const defaultParser = "/var/cache/jail-apparmor/apparmor_parser"

// appArmorParser is the command that checks a profile: $JAIL_APPARMOR_PARSER
// (make test sets it, so there a missing parser fails), else the testdeps'
// one if made; without either the test is skipped, saying how to get one.
func appArmorParser(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("JAIL_APPARMOR_PARSER"); p != "" {
		return p
	}
	if _, err := os.Stat(defaultParser); err == nil {
		return defaultParser
	}
	t.Skip("no AppArmor 4 parser: make testdeps makes " + defaultParser + " (or set JAIL_APPARMOR_PARSER)")
	return ""
}

// checkProfile compiles the profile text with the parser, loading nothing
// (-Q) and reading or writing no cache (-K -T); every warning is an error.
func checkProfile(t *testing.T, parser, text string) (string, error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "jail")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(parser, "-Q", "-K", "-T", "--warn=all", "--Werror", file).CombinedOutput()
	return string(out), err
}

// TestAppArmorProfileParses: the profile jail setup writes and the package
// ships compiles, for the packaged path and for one with a space; and the
// same parser refuses a profile with the rule misspelled, so a pass means
// the parser read it.
func TestAppArmorProfileParses(t *testing.T) {
	parser := appArmorParser(t)
	for _, bin := range []string{"/usr/bin/jail", "/opt/my tools/jail"} {
		text, err := AppArmorProfile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := checkProfile(t, parser, text); err != nil {
			t.Errorf("%s: %s refuses the profile: %v\n%s\n%s", bin, parser, err, out, text)
		}
	}
	text, _ := AppArmorProfile("/usr/bin/jail")
	broken := strings.Replace(text, "  userns,\n", "  usernss,\n", 1)
	if broken == text {
		t.Fatal("the profile has no userns rule")
	}
	if out, err := checkProfile(t, parser, broken); err == nil {
		t.Errorf("%s takes a misspelled rule: it checks nothing\n%s", parser, out)
	}
}
