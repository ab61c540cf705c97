package main

// jail seccomp: the policies, the syscall groups they may name, what a
// policy compiles to, and importing a Docker/OCI profile.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/jail-sandbox/jail/profiles"
	"github.com/jail-sandbox/jail/seccomp"
	"github.com/jail-sandbox/jail/seccomp/policyfile"
)

// seccompCommand is `jail seccomp list|groups|show|export|import`.
func seccompCommand() *cli.Command {
	return &cli.Command{
		Name:      "seccomp",
		Usage:     "inspect seccomp policies",
		UsageText: "jail seccomp list|groups|show|export|import ...",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list the built-in and user seccomp policies",
				UsageText: "jail seccomp list\n\nExample:\n   jail seccomp list",
				Action: func(c *cli.Context) error {
					entries, err := policyfile.List(policyOptions())
					if err != nil {
						return err
					}
					printEntries(c, entries)
					return nil
				},
			},
			{
				Name:      "groups",
				Usage:     "list the syscall groups policies may name (@mount, @namespaces, ...)",
				UsageText: "jail seccomp groups\n\nExample:\n   jail seccomp groups | less",
				Action: func(c *cli.Context) error {
					for _, name := range seccomp.GroupNames() {
						g := seccomp.Groups[name]
						fmt.Fprintf(c.App.Writer, "%s\n    %s\n    %s\n", name, g.Doc, strings.Join(g.Syscalls, " "))
					}
					return nil
				},
			},
			{
				Name:      "show",
				Usage:     "print a policy, resolved (extends merged), as TOML",
				UsageText: "jail seccomp show NAME\n\nExample:\n   jail seccomp show default",
				Action: func(c *cli.Context) error {
					p, err := onePolicy(c)
					if err != nil {
						return err
					}
					_, err = c.App.Writer.Write(policyfile.Encode(p))
					return err
				},
			},
			seccompExportCommand(),
			seccompImportCommand(),
		},
	}
}

// seccompExportCommand is `jail seccomp export NAME`.
func seccompExportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a policy compiled for this machine: raw BPF, or libseccomp's readable PFC",
		UsageText: "jail seccomp export NAME --format bpf|pfc [--audit]\n\nExample:\n   jail seccomp export default --format pfc | less",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "pfc", Usage: "`bpf` (struct sock_filter[]) or pfc"},
			&cli.BoolFlag{Name: "audit", Usage: "as --seccomp-audit would compile it"},
		},
		Action: func(c *cli.Context) error {
			p, err := onePolicy(c)
			if err != nil {
				return err
			}
			if p.None {
				return &exitStatus{code: exitJail, msg: "policy none compiles to no filter at all"}
			}
			mode := seccomp.Mode{Audit: c.Bool("audit")}
			switch c.String("format") {
			case "pfc":
				return seccomp.ExportPFC(p, mode, os.Stdout)
			case "bpf":
				prog, err := seccomp.Compile(p, mode)
				if err != nil {
					return err
				}
				_, err = os.Stdout.Write(prog.BPF)
				return err
			}
			return &exitStatus{code: exitJail, msg: fmt.Sprintf("--format %q: bpf or pfc", c.String("format"))}
		},
	}
}

// seccompImportCommand is `jail seccomp import FILE.json`.
func seccompImportCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "convert a Docker/OCI seccomp profile (JSON) into a jail policy (TOML)",
		UsageText: "jail seccomp import FILE.json\n\nExample:\n   jail seccomp import docker-default.json > ~/.config/jail/profiles/seccomp/docker.toml",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return &exitStatus{code: exitJail, msg: "seccomp import takes one JSON file"}
			}
			data, err := os.ReadFile(c.Args().First())
			if err != nil {
				return err
			}
			p, warnings, err := seccomp.ImportOCI(data, runtime.GOARCH)
			if err != nil {
				return fmt.Errorf("%s: %w", c.Args().First(), err)
			}
			for _, w := range warnings {
				fmt.Fprintln(os.Stderr, "jail: warning:", w)
			}
			p.Name = strings.TrimSuffix(filepath.Base(c.Args().First()), ".json")
			_, err = c.App.Writer.Write(policyfile.Encode(p))
			return err
		},
	}
}

// policyOptions say where policies are looked for, as profiles are.
func policyOptions() profiles.Options {
	return profiles.Options{SearchPath: profiles.DefaultSearchPath(os.Environ())}
}

// onePolicy loads the policy the one argument names.
func onePolicy(c *cli.Context) (*seccomp.Policy, error) {
	if c.NArg() != 1 {
		return nil, &exitStatus{code: exitJail, msg: "give one policy name (jail seccomp list)"}
	}
	return policyfile.Load(c.Args().First(), policyOptions())
}
