package main

// jail check: can this host and caller run jails? The fix for each thing
// missing.

import (
	"github.com/urfave/cli/v2"

	"github.com/jail-sandbox/jail/preflight"
)

// checkCommand is `jail check`.
func checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "check that this host and caller can run jails; print every blocker, with its cause and fix",
		UsageText: "jail check\n\nExample:\n   jail check && echo ready",
		Action: func(c *cli.Context) error {
			if !preflight.Run(c.App.Writer) {
				return &exitStatus{code: exitCheckFails}
			}
			return nil
		},
	}
}
