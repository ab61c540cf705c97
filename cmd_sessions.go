package main

// jail sessions: the workspaces agent sessions keep across calls (--session
// ID), listed, removed and collected.

import (
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/jail-sandbox/jail/sessions"
)

// sessionsCommand is `jail sessions list|rm|gc`.
func sessionsCommand() *cli.Command {
	return &cli.Command{
		Name:  "sessions",
		Usage: "list and remove agent sessions (their workspaces, kept across calls)",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "one line per session: id, size, last use, in use",
				UsageText: "jail sessions list",
				Action:    listSessions,
			},
			{
				Name:      "rm",
				Usage:     "remove a session and its workspace (refused while a call of it runs)",
				UsageText: "jail sessions rm ID",
				Action: func(c *cli.Context) error {
					dir, err := stateDir()
					if err != nil {
						return err
					}
					if c.NArg() != 1 {
						return &exitStatus{code: exitJail, msg: "usage: jail sessions rm ID"}
					}
					return sessions.Remove(dir, c.Args().First())
				},
			},
			{
				Name:      "gc",
				Usage:     "remove the sessions unused for longer than --older-than (never one in use)",
				UsageText: "jail sessions gc --older-than 24h",
				Flags:     []cli.Flag{&cli.DurationFlag{Name: "older-than", Value: 24 * time.Hour, Usage: "`AGE` since last use"}},
				Action: func(c *cli.Context) error {
					dir, err := stateDir()
					if err != nil {
						return err
					}
					res, err := sessions.GC(dir, c.Duration("older-than"))
					for _, id := range res.Removed {
						fmt.Fprintln(c.App.Writer, "removed", id)
					}
					return err
				},
			},
		},
	}
}

func listSessions(c *cli.Context) error {
	dir, err := stateDir()
	if err != nil {
		return err
	}
	list, err := sessions.List(dir)
	if err != nil {
		return err
	}
	for _, s := range list {
		use := ""
		if s.InUse {
			use = "  in use"
		}
		fmt.Fprintf(c.App.Writer, "%s\t%d\t%s%s\n", s.ID, s.Size, s.LastUsed.UTC().Format(time.RFC3339), use)
	}
	return nil
}

// stateDir is where the caller's sessions are kept.
func stateDir() (string, error) { return sessions.StateDir(os.Getenv, os.Geteuid()) }
