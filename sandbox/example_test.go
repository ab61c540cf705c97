package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/profiles"
	"github.com/jail-sandbox/jail/sandbox"
)

// A worker runs an agent's command in the default profile, with a time
// limit and a memory limit, and reads its output and status record.
func Example() {
	var out bytes.Buffer
	st, err := sandbox.Run(context.Background(), sandbox.Profile{Name: "default"},
		[]string{"sh", "-c", "echo hello from $(hostname); cat; exit 3"},
		sandbox.Options{
			Stdin:  strings.NewReader("input\n"),
			Stdout: &out,
			Overrides: profiles.Overrides{
				TimeLimit: new(30 * time.Second),
				Memory:    new(uint64(256 << 20)), // bytes
			},
		})
	if err != nil {
		fmt.Println("jail failed:", err)
		return
	}
	fmt.Print(out.String())
	fmt.Println("exit", st.ExitCode, "timed out", st.TimedOut, "profile", st.Profile)
	// Output:
	// hello from jail
	// input
	// exit 3 timed out false profile default
}

// Cancelling the context kills the jail, daemons and all.
func ExampleRun_cancel() {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := sandbox.Run(ctx, sandbox.Profile{Name: "default"}, []string{"sleep", "60"}, sandbox.Options{})
	fmt.Println(err)
	// Output:
	// context deadline exceeded
}
