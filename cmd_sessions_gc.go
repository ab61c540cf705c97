package main

// jail sessions gc: removing the sessions unused for a while, saying what
// happened to each, and recording it in an audit log.

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/jail-sandbox/jail/audit"
	"github.com/jail-sandbox/jail/sessions"
)

// gcSessions is `jail sessions gc`: a line per session it removed, left in
// use, or failed to remove; with --audit-log, one record of all of it.
// A failed removal fails the command (125), after the record.
func gcSessions(c *cli.Context) error {
	dir, err := stateDir()
	if err != nil {
		return err
	}
	age := c.Duration("older-than")
	res, err := sessions.GC(dir, age)
	if err != nil {
		return err
	}
	for _, id := range res.Removed {
		fmt.Fprintln(c.App.Writer, "removed", id)
	}
	for _, id := range res.Skipped {
		fmt.Fprintf(c.App.Writer, "skipped %s (in use)\n", id)
	}
	for _, f := range res.Failed {
		fmt.Fprintf(c.App.Writer, "failed %s: %s\n", f.ID, f.Err)
	}
	if path := c.String("audit-log"); path != "" {
		if err := audit.Append(path, audit.NewGCRecord(res, age, jailVersion())); err != nil {
			return err
		}
	}
	if len(res.Failed) > 0 {
		return fmt.Errorf("sessions gc: %d session(s) could not be removed (see above)", len(res.Failed))
	}
	return nil
}
