package main

// jail audit: reading an audit log (--audit-log): the last runs, or counts
// by verdict and the top denials.

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/jail-sandbox/jail/audit"
)

// auditCommand is `jail audit tail|summary`.
func auditCommand() *cli.Command {
	file := &cli.StringFlag{Name: "log", Aliases: []string{"f"}, Required: true, Usage: "the audit log `FILE`"}
	return &cli.Command{
		Name:  "audit",
		Usage: "read an audit log (--audit-log): the last runs, or counts by verdict and the top denials",
		Subcommands: []*cli.Command{
			{
				Name:      "tail",
				Usage:     "print the last N records",
				UsageText: "jail audit tail -f FILE [-n 10]",
				Flags:     []cli.Flag{file, &cli.IntFlag{Name: "n", Value: 10, Usage: "`N` records"}},
				Action:    auditTail,
			},
			{
				Name:      "summary",
				Usage:     "counts by verdict and the top denied syscalls and hosts",
				UsageText: "jail audit summary -f FILE [--since 1h]",
				Flags:     []cli.Flag{file, &cli.DurationFlag{Name: "since", Value: 24 * time.Hour, Usage: "`AGE` of the oldest record counted"}},
				Action:    auditSummary,
			},
		},
	}
}

func auditTail(c *cli.Context) error {
	l, err := audit.Read(c.String("log"), time.Time{})
	if err != nil {
		return err
	}
	if l.Bad > 0 {
		fmt.Fprintf(c.App.ErrWriter, "jail: %d lines of the log are not records (cut short?), skipped\n", l.Bad)
	}
	lines := l.Lines
	if n := c.Int("n"); len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for _, line := range lines {
		fmt.Fprintln(c.App.Writer, line)
	}
	return nil
}

func auditSummary(c *cli.Context) error {
	l, err := audit.Read(c.String("log"), time.Now().Add(-c.Duration("since")))
	if err != nil {
		return err
	}
	if l.Bad > 0 {
		fmt.Fprintf(c.App.Writer, "unreadable lines (cut short?): %d\n", l.Bad)
	}
	audit.Summarize(l).Print(c.App.Writer)
	return nil
}
