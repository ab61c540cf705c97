package jail

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// argsEnv makes this test binary print its arguments and end, before any
// test runs: what a program that links package jail got from the C entry.
const argsEnv = "JAIL_TEST_PRINT_ARGS"

func init() {
	if os.Getenv(argsEnv) != "" {
		fmt.Println(strings.Join(os.Args, "|"))
		os.Exit(0)
	}
}

// TestLibraryKeepsItsArguments: jail-sh is a mode of jail's own CLI only.
// In another program that links package jail (through sandbox, as this
// test binary does), the C entry leaves arguments that would be jail-sh's
// to the program: its own "sh", and a link named jail-sh.
func TestLibraryKeepsItsArguments(t *testing.T) {
	for _, argv := range [][]string{{"jail-sh", "echo hi"}, {"jail-sh", "-c", "echo hi"}, {"prog", "sh", "-c", "echo hi"}} {
		cmd := exec.Command("/proc/self/exe", argv[1:]...)
		cmd.Args[0] = argv[0]
		cmd.Env = append(os.Environ(), argsEnv+"=1")
		out, err := cmd.Output()
		if got, want := strings.TrimSpace(string(out)), strings.Join(argv, "|"); err != nil || got != want {
			t.Errorf("%q: the program got %q (%v), want its own arguments %q", argv, got, err, want)
		}
	}
}
