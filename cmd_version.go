package main

// jail version.

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// versionCommand is `jail version`.
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print jail's version",
		UsageText: "jail version\n\nExample:\n   jail version",
		Action: func(c *cli.Context) error {
			fmt.Fprintf(c.App.Writer, "jail %s\n", version)
			return nil
		},
	}
}
