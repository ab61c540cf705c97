package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// TestFlagsFirst checks the argv rewriting against jail's own commands: a
// boolean flag never takes the next word as its value.
func TestFlagsFirst(t *testing.T) {
	app := newApp(time.Now(), nil)
	for _, tc := range []struct{ args, want string }{
		{"jail profile show agent --workspace /w", "jail profile show --workspace /w agent"},
		{"jail profile show agent --seccomp-audit --workspace /w", "jail profile show --seccomp-audit --workspace /w agent"},
		{"jail profile show agent -seccomp-audit extra", "jail profile show -seccomp-audit agent extra"},
		{"jail profile show agent --memory=1G -p x", "jail profile show --memory=1G -p x agent"},
		{"jail profile show agent --help x", "jail profile show --help agent x"},
		{"jail profile show agent -h", "jail profile show -h agent"},
		{"jail profile show agent - --cpu", "jail profile show --cpu agent -"},
		// --audit is seccomp export's, not profile show's: there it takes
		// the next word, as any flag urfave/cli will refuse.
		{"jail profile show agent --audit x", "jail profile show --audit x agent"},
		{"jail seccomp export default --audit --format bpf", "jail seccomp export --audit --format bpf default"},
		{"jail seccomp export default --format pfc --audit", "jail seccomp export --format pfc --audit default"},
		// Only the commands that take a name before their flags.
		{"jail seccomp show default --x y", "jail seccomp show default --x y"},
		{"jail audit tail x -f log", "jail audit tail x -f log"},
		{"jail -p default x", "jail -p default x"},
		{"jail profile", "jail profile"},
	} {
		got := flagsFirst(app, strings.Fields(tc.args))
		if strings.Join(got, " ") != tc.want {
			t.Errorf("flagsFirst(%q) = %q, want %q", tc.args, strings.Join(got, " "), tc.want)
		}
	}
}

// TestFlagsFirstDerived checks that which flags are boolean comes from the
// command's flags, not from a list: a new boolean flag needs no change here.
func TestFlagsFirstDerived(t *testing.T) {
	app := &cli.App{Commands: []*cli.Command{{
		Name: "profile",
		Subcommands: []*cli.Command{{
			Name: "show",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "new-switch", Aliases: []string{"n"}},
				&cli.StringFlag{Name: "value"},
			},
		}},
	}}}
	got := flagsFirst(app, strings.Fields("jail profile show NAME -n --new-switch --value v"))
	want := strings.Fields("jail profile show -n --new-switch --value v NAME")
	if !slices.Equal(got, want) {
		t.Errorf("flagsFirst = %q, want %q", got, want)
	}
	got = flagsFirst(app, strings.Fields("jail profile show NAME --value --new-switch"))
	want = strings.Fields("jail profile show --value --new-switch NAME")
	if !slices.Equal(got, want) {
		t.Errorf("a valued flag takes the next word whatever it is: flagsFirst = %q, want %q", got, want)
	}
}

// TestBooleanFlags checks the spellings derived from jail run's flags.
func TestBooleanFlags(t *testing.T) {
	got := booleanFlags(runFlags())
	for _, s := range []string{"--seccomp-audit", "-seccomp-audit"} {
		if !got[s] {
			t.Errorf("%s is not boolean", s)
		}
	}
	for _, s := range []string{"--memory", "-p", "--profile", "--status-json"} {
		if got[s] {
			t.Errorf("%s is boolean", s)
		}
	}
}
