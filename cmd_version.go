package main

// jail version and jail --version: what this binary is, for a bug report:
// jail's version and commit, the libseccomp linked into it, the Go that
// built it.

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/jail-sandbox/jail/seccomp"
)

// commit is set by the Makefile (-X main.commit=...); a build without it
// takes the commit from Go's own VCS stamp, when there is one.
var commit string

// versionCommand is `jail version`.
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print jail's version and commit, the libseccomp linked in and the Go that built it (also: jail --version)",
		UsageText: "jail version\n\nExample:\n   jail version",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return &exitStatus{code: exitJail, msg: fmt.Sprintf("version takes no arguments, not %q", c.Args().First())}
			}
			return printVersion(c.App.Writer)
		},
	}
}

// versionFlag is `jail --version`, outside the CLI's flags: the plan
// cache's walk of a run's flags (plancache/args.c) never meets it.
func versionFlag(args []string) error {
	if len(args) > 0 {
		return &exitStatus{code: exitJail, msg: fmt.Sprintf("--version takes no arguments, not %q", args[0])}
	}
	return printVersion(os.Stdout)
}

// printVersion writes the version lines of this binary.
func printVersion(w io.Writer) error {
	bi, _ := debug.ReadBuildInfo() // nil: then only what the linker set
	_, err := io.WriteString(w, versionText(version, commit, bi, seccompVersion()))
	return err
}

// seccompVersion is the libseccomp linked into jail (statically, by the
// Makefile), as the library itself reports it.
func seccompVersion() string {
	s, _ := seccomp.Probe() // Library is set even where the kernel has no seccomp
	return s.Library
}

// jailVersion is this binary's version, as the audit log records it.
func jailVersion() string {
	bi, _ := debug.ReadBuildInfo()
	return buildVersion(version, bi)
}

// buildVersion is jail's version: what the linker set (-X) wins; without
// it, the module version `go install` stamps; else "devel", never a
// made-up release.
func buildVersion(ver string, bi *debug.BuildInfo) string {
	if ver == "" && bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		ver = bi.Main.Version
	}
	if ver == "" {
		ver = "devel"
	}
	return ver
}

// versionText is the version lines. The commit is what the linker set,
// else the one Go stamped where -buildvcs saw a checkout, else "unknown".
func versionText(ver, rev string, bi *debug.BuildInfo, libseccomp string) string {
	modified := ""
	if bi != nil {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && rev == "":
				rev = s.Value
			case s.Key == "vcs.modified" && s.Value == "true":
				modified = " (modified)"
			}
		}
	}
	if rev == "" {
		rev, modified = "unknown", ""
	}
	return fmt.Sprintf("jail %s\ncommit %s%s\nlibseccomp %s\n%s %s/%s\n",
		buildVersion(ver, bi), rev, modified, libseccomp, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
