package main

// jail profiles and jail profile show: which profiles there are, and what
// one comes to with its extends and the flags applied.

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/jail-sandbox/jail/profiles"
	"github.com/jail-sandbox/jail/secrets"
)

// profilesCommand is `jail profiles`.
func profilesCommand() *cli.Command {
	return &cli.Command{
		Name:      "profiles",
		Usage:     "list the built-in and user profiles",
		UsageText: "jail profiles\n\nExample:\n   JAIL_PROFILE_PATH=./profiles jail profiles",
		Action: func(c *cli.Context) error {
			entries, err := profiles.List(profiles.Options{SearchPath: profiles.DefaultSearchPath(os.Environ())})
			if err != nil {
				return err
			}
			printEntries(c, entries)
			return nil
		},
	}
}

// profileCommand is `jail profile show`.
func profileCommand() *cli.Command {
	return &cli.Command{
		Name:      "profile",
		Usage:     "inspect a profile",
		UsageText: "jail profile show NAME [overrides]",
		Subcommands: []*cli.Command{{
			Name:      "show",
			Usage:     "print the fully resolved profile (extends and flags applied) as TOML",
			UsageText: "jail profile show [-p] NAME [overrides]\n\nExample:\n   jail profile show agent --workspace /src/app --time-limit 1m",
			Flags:     overrideFlags(),
			Action:    showProfile,
		}},
	}
}

func showProfile(c *cli.Context) error {
	name := c.String("profile")
	if c.NArg() > 1 {
		return &exitStatus{code: exitJail, msg: "profile show takes one profile name"}
	}
	if c.NArg() == 1 {
		name = c.Args().First()
	}
	p, o, err := loadProfile(c, name)
	if err != nil {
		return err
	}
	if err := p.Apply(o); err != nil {
		return err
	}
	warn(p)
	out, err := p.Encode()
	if err != nil {
		return err
	}
	if p.Secrets.File != "" {
		// The keys the file gives, never their values.
		kv, err := secrets.Read(p.Secrets.File)
		if err != nil {
			return err
		}
		out = append(out, "\n# secrets the command gets from "+p.Secrets.File+":\n"...)
		for _, k := range secrets.Keys(kv) {
			out = append(out, "#   "+k+" = \"***\"\n"...)
		}
	}
	_, err = c.App.Writer.Write(out)
	return err
}

// printEntries lists profiles or policies: name, description, source.
func printEntries(c *cli.Context, entries []profiles.Entry) {
	w := 0
	for _, e := range entries {
		w = max(w, len(e.Name))
	}
	for _, e := range entries {
		fmt.Fprintf(c.App.Writer, "%-*s  %s  (%s)\n", w, e.Name, e.Description, e.Source)
	}
}
