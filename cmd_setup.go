package main

// jail setup: the one-time host settings, as root (setup/), that make runs
// cheaper (favordynmods on cgroup v1) or possible for other callers
// (cgroup delegation, an AppArmor profile).

import (
	"fmt"
	"os"
	"os/user"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/jail-sandbox/jail/setup"
)

// setupCommand is `jail setup`.
func setupCommand() *cli.Command {
	return &cli.Command{
		Name:  "setup",
		Usage: "as root, once per boot: switch favordynmods on (cgroup v1), delegate run cgroups to users, allow jail in AppArmor",
		UsageText: "jail setup [--user NAME]... [--dry-run]\n\n" +
			"Each step looks first and changes only what is not set yet; it prints one line\n" +
			"of what it changed, or why nothing. --user defaults to sudo's caller.\n\n" +
			"Example:\n   sudo jail setup --dry-run && sudo jail setup",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "print what would change; change nothing (needs no root)"},
			&cli.StringSliceFlag{Name: "user", Usage: "`NAME` or uid to delegate run cgroups to on cgroup v1 (repeatable)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return &exitStatus{code: exitJail, msg: fmt.Sprintf("setup takes no arguments, not %q (jail setup --help)", c.Args().First())}
			}
			dry := c.Bool("dry-run")
			if !dry && os.Geteuid() != 0 {
				return &exitStatus{code: exitJail, msg: "setup changes the host: run it as root (jail setup --dry-run shows what it would do)"}
			}
			users, err := setupUsers(c.StringSlice("user"))
			if err != nil {
				return err
			}
			h, err := setup.Detect()
			if err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			if err := setup.Run(h, setup.Steps(users), dry, c.App.Writer); err != nil {
				return fmt.Errorf("setup: %w", err)
			}
			return nil
		},
	}
}

// setupUsers are the uids --user names; without it, the caller sudo ran
// setup for, or, for a dry run as another user, that user.
func setupUsers(names []string) ([]int, error) {
	var uids []int
	for _, n := range names {
		if id, err := strconv.Atoi(n); err == nil && id >= 0 {
			uids = append(uids, id)
			continue
		}
		u, err := user.Lookup(n)
		if err != nil {
			return nil, fmt.Errorf("setup: --user %q: no such user", n)
		}
		id, _ := strconv.Atoi(u.Uid)
		uids = append(uids, id)
	}
	if len(names) > 0 {
		return uids, nil
	}
	if id, err := strconv.Atoi(os.Getenv("SUDO_UID")); err == nil && os.Geteuid() == 0 {
		return []int{id}, nil
	}
	if id := os.Geteuid(); id != 0 {
		return []int{id}, nil
	}
	return nil, nil
}
