//go:build jail_gendocs

// The generator build of jail (make release builds it with the tag
// jail_gendocs, as bin/jail-gendocs): instead of running, the binary writes
// the man page, the shell completions and the AppArmor profile that the
// package ships, from the CLI defined here (newApp), and exits. bin/jail is
// never built with the tag, so internal/gendocs is not linked into the
// per-call binary. What the CLI definition does not say (what values
// complete to, exit statuses, files) is said here.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/jail-sandbox/jail/internal/gendocs"
)

// init runs the generator before main, and ends the process.
func init() {
	if err := genDocs(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "jail-gendocs:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// genDocs is `jail-gendocs -out DIR [-date YYYY-MM-DD] [-binary PATH]`.
func genDocs(args []string) error {
	fs := flag.NewFlagSet("jail-gendocs", flag.ContinueOnError)
	out := fs.String("out", "", "the directory to write the package's files under, at their installed paths")
	date := fs.String("date", time.Now().UTC().Format(time.DateOnly), "the man page's date (the commit's, for a reproducible page)")
	binary := fs.String("binary", "/usr/bin/jail", "the installed binary's path, which the AppArmor profile names")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		return fmt.Errorf("usage: jail-gendocs -out DIR [-date YYYY-MM-DD] [-binary PATH]")
	}
	app := newApp(time.Now(), nil)
	return gendocs.Write(gendocs.Spec{
		App:     app,
		Version: jailVersion(),
		Date:    *date,
		Binary:  *binary,
		Values: map[string]gendocs.Kind{
			"profile": gendocs.Profile,
			"seccomp": gendocs.Policy,
			"session": gendocs.Session,
		},
		Args: map[string]gendocs.Kind{
			"":               gendocs.Command,
			"run":            gendocs.Command,
			"profile show":   gendocs.Profile,
			"seccomp show":   gendocs.Policy,
			"seccomp export": gendocs.Policy,
			"seccomp import": gendocs.File,
			"sessions rm":    gendocs.Session,
		},
		Sections: manSections(),
	}, *out)
}

// manSections are the man page's sections after the commands.
func manSections() []gendocs.Section {
	code := strconv.Itoa
	return []gendocs.Section{
		{Title: "Exit status", Text: "A run exits as its command did; jail's own statuses are those a shell gives too.", Items: []gendocs.Item{
			{Tag: "0-124", Text: "the command's own exit status"},
			{Tag: code(exitJail), Text: "jail itself refused or failed (a bad profile or flag, a host that cannot run jails): the command did not run; one line on stderr says why"},
			{Tag: code(exitNoExec), Text: "the command exists in the jail but cannot be executed"},
			{Tag: code(exitNotFound), Text: "the command does not exist in the jail"},
			{Tag: "128+N", Text: "the command was killed by signal N (a time limit kills with SIGKILL: 137, and the status record says timed_out)"},
			{Tag: code(exitCheckFails), Text: "from jail check: a requirement is missing"},
		}},
		{Title: "Environment", Items: []gendocs.Item{
			{Tag: "JAIL_PROFILE_PATH", Text: "colon-separated directories searched for NAME.toml profiles (and seccomp/NAME.toml policies) before the two below; relative ones are ignored"},
			{Tag: "JAIL_PROFILE, JAIL_SESSION, JAIL_ALLOW, JAIL_FLAGS", Text: "for jail sh and jail-sh: the profile (default agent), the session, the hosts to allow and other run flags"},
		}},
		{Title: "Files", Items: []gendocs.Item{
			{Tag: "~/.config/jail/profiles/NAME.toml, /etc/jail/profiles/NAME.toml", Text: "profiles by name, after $JAIL_PROFILE_PATH; a built-in's name always means the built-in. A file must be owned by the caller or root and writable by no one else"},
			{Tag: "~/.config/jail/profiles/seccomp/NAME.toml, /etc/jail/profiles/seccomp/NAME.toml", Text: "seccomp policies by name"},
			{Tag: "/etc/apparmor.d/jail", Text: "the AppArmor profile that lets jail make user namespaces where kernel.apparmor_restrict_unprivileged_userns is 1 (Ubuntu 24.04); jail setup writes it for a binary elsewhere"},
		}},
		{Title: "See also", Text: "jail check says whether this host and caller can run jails, and how to fix what is missing. The README: https://github.com/jail-sandbox/jail"},
	}
}
