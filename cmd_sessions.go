package main

// jail sessions: the workspaces agent sessions keep across calls (--session
// ID), made (empty, or a clone of a git repository on a branch of its
// own), listed, diffed and exported back, removed and collected.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/jail-sandbox/jail/profiles"
	"github.com/jail-sandbox/jail/sessions"
)

// sessionsCommand is `jail sessions list|create|diff|export|rm|gc`.
func sessionsCommand() *cli.Command {
	cmd := &cli.Command{
		Name:  "sessions",
		Usage: "make, list, diff, export and remove agent sessions (their workspaces, kept across calls)",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "one line per session: id, size, last use, repository, branch, base, in use (--json: a JSON array)",
				UsageText: "jail sessions list [--json]",
				Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "a JSON array of {id, bytes, last_use, in_use, repository, branch, base}"}},
				Action:    listSessions,
			},
			{
				Name:  "create",
				Usage: "make a session: empty, or with --git a clone of REPO on a branch of its own",
				UsageText: "jail sessions create ID [--git REPO] [--branch NAME] [--from REF] [-p PROFILE]\n\n" +
					"Example:\n   jail sessions create fix-42 --git ~/src/app --from main",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "git", Usage: "the repository (its top directory, or a bare one) to clone", Value: ""},
					&cli.StringFlag{Name: "branch", Usage: "the session's branch `NAME` (default jail/ID)"},
					&cli.StringFlag{Name: "from", Usage: "the commit, branch or tag `REF` of REPO to start from (default HEAD)"},
					&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, Value: "agent", Usage: "the `PROFILE` the session's calls use: its host ids own the workspace"},
				},
				Action: createSession,
			},
			{
				Name:      "diff",
				Usage:     "the session branch's changes against its base, a unified diff (nothing of the session's git config runs on the host)",
				UsageText: "jail sessions diff ID",
				Action:    diffSession,
			},
			{
				Name:      "export",
				Usage:     "fast-forward REPO's branch (default the session's) to the session's branch; prints the ref and commit",
				UsageText: "jail sessions export ID [--to BRANCH]",
				Flags:     []cli.Flag{&cli.StringFlag{Name: "to", Usage: "REPO's `BRANCH` to set (default the session's branch name)"}},
				Action:    exportSession,
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
				UsageText: "jail sessions gc --older-than 24h [--audit-log FILE]",
				Flags: []cli.Flag{&cli.DurationFlag{Name: "older-than", Value: 24 * time.Hour, Usage: "`AGE` since last use"},
					&cli.StringFlag{Name: "audit-log", Usage: "append what gc did to the audit log `FILE` (a record of kind sessions_gc)"}},
				Action: gcSessions,
			},
		},
	}
	// An id "h" or "help" is a session, not a request for help (urfave/cli
	// gives every command a help subcommand; --help stays).
	for _, sub := range cmd.Subcommands {
		sub.HideHelpCommand = true
	}
	return cmd
}

// sessionJSON is one element of `jail sessions list --json`: fields are
// only ever added.
type sessionJSON struct {
	ID         string `json:"id"`
	Bytes      int64  `json:"bytes"`
	LastUse    string `json:"last_use"`
	InUse      bool   `json:"in_use"`
	Repository string `json:"repository"`
	Branch     string `json:"branch"`
	Base       string `json:"base"`
}

func listSessions(c *cli.Context) error {
	_, flags, err := sessionArgs(c, "jail sessions list [--json]", 0, "json")
	if err != nil {
		return err
	}
	dir, err := stateDir()
	if err != nil {
		return err
	}
	list, err := sessions.List(dir)
	if err != nil {
		return err
	}
	if c.Bool("json") || flags["json"] != "" {
		out := []sessionJSON{}
		for _, s := range list {
			out = append(out, sessionJSON{ID: s.ID, Bytes: s.Size, LastUse: s.LastUsed.UTC().Format(time.RFC3339), InUse: s.InUse,
				Repository: s.Repository, Branch: s.Branch, Base: s.Base})
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.App.Writer, "%s\n", b)
		return nil
	}
	for _, s := range list {
		git, use := "", ""
		if s.Repository != "" {
			git = fmt.Sprintf("\t%s\t%s\t%.12s", s.Repository, s.Branch, s.Base)
		}
		if s.InUse {
			use = "  in use"
		}
		fmt.Fprintf(c.App.Writer, "%s\t%d\t%s%s%s\n", s.ID, s.Size, s.LastUsed.UTC().Format(time.RFC3339), git, use)
	}
	return nil
}

func createSession(c *cli.Context) error {
	const usage = "jail sessions create ID [--git REPO] [--branch NAME] [--from REF] [-p PROFILE]"
	id, flags, err := sessionArgs(c, usage, 1, "git", "branch", "from", "profile", "p")
	if err != nil {
		return err
	}
	if err := sessions.Check(id); err != nil {
		return err
	}
	dir, err := stateDir()
	if err != nil {
		return err
	}
	profile := flagValue(c, flags, "profile", "p")
	if strings.HasSuffix(profile, ".toml") {
		if profile, err = filepath.Abs(profile); err != nil {
			return err
		}
	}
	p, err := profiles.Load(profile, profiles.Options{SearchPath: profiles.DefaultSearchPath(os.Environ())})
	if err != nil {
		return err
	}
	uid, gid := os.Geteuid(), os.Getegid()
	if uid == 0 {
		uid, gid = int(p.User.HostUID), int(p.User.HostGID)
	}
	repo, branch, from := flagValue(c, flags, "git"), flagValue(c, flags, "branch"), flagValue(c, flags, "from")
	if repo == "" {
		if branch != "" || from != "" {
			return errors.New("--branch and --from: only with --git REPO")
		}
		return sessions.Create(dir, id, uid, gid, profile, nil)
	}
	src, err := gitSource(dir, id, repo, branch, from)
	if err != nil {
		return err
	}
	if err := sessions.Create(dir, id, uid, gid, profile, src); err != nil {
		return err
	}
	return nil
}

// gitSource checks REPO, the branch and the base for create --git.
func gitSource(state, id, path, branch, from string) (*sessions.Source, error) {
	if branch == "" {
		branch = "jail/" + id
	}
	if err := sessions.CheckBranch(branch); err != nil {
		return nil, fmt.Errorf("%w; fix: --branch NAME", err)
	}
	repo, err := sessions.OpenRepo(state, path)
	if err != nil {
		return nil, err
	}
	ref := from
	if ref == "" {
		ref = "HEAD"
	}
	base, err := repo.Commit(ref)
	if err != nil {
		return nil, err
	}
	if at, err := repo.Branch(branch); err != nil {
		return nil, err
	} else if at != "" {
		return nil, fmt.Errorf("branch %s exists already in %s; fix: --branch another name, or delete it (git -C %s branch -D %s)", branch, repo.Top, repo.Top, branch)
	}
	if repo.Dirty() {
		fmt.Fprintf(os.Stderr, "jail: %s has changes staged but not committed; session %s starts from %s (commit %.12s) without them\n", repo.Top, id, ref, base)
	}
	return &sessions.Source{Repo: repo, Base: base, Branch: branch}, nil
}

func diffSession(c *cli.Context) error {
	id, _, err := sessionArgs(c, "jail sessions diff ID", 1)
	if err != nil {
		return err
	}
	dir, err := stateDir()
	if err != nil {
		return err
	}
	snap, err := sessions.Fetch(dir, id, jailIn)
	if err != nil {
		return err
	}
	defer snap.Close()
	return snap.Diff(c.App.Writer)
}

func exportSession(c *cli.Context) error {
	id, flags, err := sessionArgs(c, "jail sessions export ID [--to BRANCH]", 1, "to")
	if err != nil {
		return err
	}
	dir, err := stateDir()
	if err != nil {
		return err
	}
	to := flagValue(c, flags, "to")
	if to != "" {
		if err := sessions.CheckBranch(to); err != nil {
			return err
		}
	}
	snap, err := sessions.Fetch(dir, id, jailIn)
	if err != nil {
		return err
	}
	defer snap.Close()
	ref, err := snap.Export(id, to)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "%s %s\n", ref, snap.Tip)
	return nil
}

// jailIn runs argv in session id's jail (sessions.JailRun): this binary,
// argv[0] "jail", the session's profile, no network, no tty, no output
// cap (a bundle comes out on stdout).
func jailIn(profile, id string, stdout io.Writer, argv ...string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// A time limit: the session's repository is the jail's, and a FIFO in
	// its config would hang git, and the session's lock with it.
	args := append([]string{"jail", "-p", profile, "--session", id, "--no-tty", "--network", "none",
		"--max-output", "unlimited", "--time-limit", "10m", "--cwd", "/workspace", "--"}, argv...)
	stderr := sessions.Limited{N: 1 << 16}
	cmd := &exec.Cmd{Path: self, Args: args, Stdout: stdout, Stderr: &stderr, Env: os.Environ()}
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ee.ExitCode() == 153 {
				return fmt.Errorf("%s in the jail: its output passed the file size limit of profile %s (limits.fsize, what a bundle may be)", argv[0], profile)
			}
			return fmt.Errorf("%s in the jail: exit status %d: %s", argv[0], ee.ExitCode(), sessions.LastLine(stderr.String()))
		}
		return err
	}
	return nil
}

// sessionArgs takes the n positional words of a sessions subcommand
// (n is 0 or 1) and the flags given after them: urfave/cli stops parsing
// at the first positional word, so `create ID --git REPO` leaves
// "--git REPO" to us. names are the flags' names (a bool flag: "json").
func sessionArgs(c *cli.Context, usage string, n int, names ...string) (string, map[string]string, error) {
	bad := func(why string) error {
		return &exitStatus{code: exitJail, msg: why + "; usage: " + usage}
	}
	known := map[string]bool{}
	for _, name := range names {
		known[name] = true
	}
	flags := map[string]string{}
	var pos []string
	args := c.Args().Slice()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !known[name] {
			return "", nil, bad(fmt.Sprintf("flag %s: not a flag of this command", a))
		}
		if name == "json" {
			flags[name] = "true"
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return "", nil, bad(fmt.Sprintf("flag %s: needs a value", a))
			}
			i++
			value = args[i]
		}
		if value == "" {
			return "", nil, bad(fmt.Sprintf("flag %s: must not be empty", a))
		}
		flags[name] = value
	}
	for _, name := range c.FlagNames() {
		if v, ok := c.Value(name).(string); ok && c.IsSet(name) && v == "" {
			return "", nil, bad(fmt.Sprintf("flag --%s: must not be empty", name))
		}
	}
	if len(pos) != n {
		return "", nil, bad(fmt.Sprintf("want %d argument(s), got %d", n, len(pos)))
	}
	if n == 0 {
		return "", flags, nil
	}
	return pos[0], flags, nil
}

// flagValue is flag name's value, given after the positional words or
// before them.
func flagValue(c *cli.Context, after map[string]string, names ...string) string {
	for _, name := range names {
		if v, ok := after[name]; ok {
			return v
		}
	}
	return c.String(names[0])
}

// stateDir is where the caller's sessions are kept.
func stateDir() (string, error) { return sessions.StateDir(os.Getenv, os.Geteuid()) }
