//go:build jailgen

// Command builtingen writes builtin_layers.go, a package's built-ins
// (profiles, seccomp policies) decoded ahead of time, so that a run that
// uses one does not parse TOML. go generate runs it in the package's
// directory:
//
//	go run -tags jailgen github.com/jail-sandbox/jail/internal/builtingen profiles|policyfile
//
// The tag builds the one function each package exports for it.
package main

import (
	"fmt"
	"go/format"
	"os"

	"github.com/jail-sandbox/jail/profiles"
	"github.com/jail-sandbox/jail/seccomp/policyfile"
)

func main() {
	gen := map[string]func() (string, error){
		"profiles":   profiles.GeneratedLayers,
		"policyfile": policyfile.GeneratedLayers,
	}
	if len(os.Args) != 2 || gen[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: builtingen profiles|policyfile")
		os.Exit(2)
	}
	if err := write(gen[os.Args[1]]); err != nil {
		fmt.Fprintln(os.Stderr, "builtingen:", err)
		os.Exit(1)
	}
}

func write(gen func() (string, error)) error {
	src, err := gen()
	if err != nil {
		return err
	}
	out, err := format.Source([]byte(src))
	if err != nil {
		return fmt.Errorf("generated code: %w\n%s", err, src)
	}
	return os.WriteFile("builtin_layers.go", out, 0o644)
}
