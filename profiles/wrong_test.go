package profiles

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the want lines of testdata/*.wrong from the actual errors")

const wantPrefix = "# want: "

// TestWrong loads every testdata/*.wrong profile, which must fail with
// exactly the problems listed in its leading "# want: " lines, in order.
func TestWrong(t *testing.T) {
	files, err := filepath.Glob("testdata/*.wrong")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 15 {
		t.Fatalf("only %d .wrong files", len(files))
	}
	if *update {
		// A want block shifts the lines below it, and a file may extend
		// another: repeat until nothing changes.
		for range 5 {
			changed := false
			for _, f := range files {
				changed = rewriteWants(t, f) || changed
			}
			if !changed {
				break
			}
		}
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := splitWants(string(data))
			if len(want) == 0 {
				t.Fatalf("%s has no %q lines", f, wantPrefix)
			}
			got := wrongErrors(f)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("Load(%s):\ngot:\n\t%s\nwant:\n\t%s", f, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
			}
		})
	}
}

// wrongErrors loads f, with testdata as the search path (so a profile can
// name a policy in testdata/seccomp), and returns its error lines, with
// paths relative to testdata so the want lines do not depend on where the
// test runs.
func wrongErrors(f string) []string {
	_, err := Load(f, Options{SearchPath: []string{"testdata"}})
	if err == nil {
		return []string{"(no error)"}
	}
	abs, _ := filepath.Abs("testdata")
	msg := strings.ReplaceAll(err.Error(), abs+"/", "")
	return strings.Split(strings.ReplaceAll(msg, "testdata/", ""), "\n")
}

// splitWants separates a file's leading want lines from the rest.
func splitWants(data string) (wants []string, rest string) {
	for strings.HasPrefix(data, wantPrefix) {
		line, after, _ := strings.Cut(data, "\n")
		wants = append(wants, strings.TrimPrefix(line, wantPrefix))
		data = after
	}
	return wants, data
}

func rewriteWants(t *testing.T, f string) bool {
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	old, rest := splitWants(string(data))
	got := wrongErrors(f)
	if strings.Join(old, "\n") == strings.Join(got, "\n") {
		return false
	}
	var b strings.Builder
	for _, g := range got {
		b.WriteString(wantPrefix + g + "\n")
	}
	b.WriteString(rest)
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return true
}
