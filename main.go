// Command jail runs one command in one fresh, throw-away Linux sandbox:
//
//	jail -p agent --workspace "$PWD" -- bash -c 'make test'
//
// This file is the CLI only: flags, help text and exit codes. The flow of a
// run is profiles (what to build) → jail (build it, run, report).

// A short-lived launcher has no use for the runtime's cgroup-aware
// GOMAXPROCS, which rereads cgroup files every second; these are also the
// defaults of go.mod's go version, stated so a bump does not change them.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main

import (
	"errors"
	"fmt"
	"golang.org/x/sys/unix"
	"io"
	"jail/audit"
	"jail/proxy"
	"jail/secrets"
	"jail/sessions"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"jail/jail"
	"jail/plancache"
	"jail/preflight"
	"jail/profiles"
	"jail/seccomp"
	"jail/seccomp/policyfile"
)

// Exit statuses of jail's own: the command's status passes through
// otherwise (128+N for signal N).
const (
	exitJail       = 125 // jail failed: bad profile, flag or host; the command did not run
	exitNoExec     = 126 // the command exists but cannot be executed
	exitNotFound   = 127 // the command does not exist in the jail
	exitCheckFails = 1   // jail check found a requirement missing
)

// version is set by the Makefile (-X main.version=...).
var version = "dev"

func main() {
	if os.Getenv("_JAIL_STAGE") == "proxy" {
		// The allowlist proxy, started by the runner (jail/runner.c).
		proxy.Main(os.Args)
	}
	if filepath.Base(os.Args[0]) == "jail-sh" {
		shMain(os.Args[1:])
	}
	if len(os.Args) > 1 && os.Args[1] == "sh" {
		shMain(os.Args[2:])
	}
	started := time.Now()
	args, command := splitCommand(os.Args)
	args = flagsFirst(args)
	err := newApp(started, command).Run(args)
	if err == nil {
		return
	}
	var ex *exitStatus
	if errors.As(err, &ex) {
		if ex.msg != "" {
			fmt.Fprintln(os.Stderr, "jail:", ex.msg)
		}
		os.Exit(ex.code)
	}
	fmt.Fprintln(os.Stderr, "jail:", oneLine(err))
	os.Exit(exitJail)
}

// exitStatus ends jail with a status and, if msg is set, one line on stderr.
type exitStatus struct {
	code int
	msg  string
}

func (e *exitStatus) Error() string { return e.msg }

// splitCommand cuts argv at the first "--": what follows is the command,
// never parsed as flags or subcommands (urfave/cli would take a command
// named "profiles" for ours).
func splitCommand(argv []string) (args, command []string) {
	for i := 1; i < len(argv); i++ {
		if argv[i] == "--" {
			return argv[:i], argv[i+1:]
		}
	}
	return argv, nil
}

// flagsFirst lets `jail profile show NAME --flag v` (and `jail seccomp
// export NAME --format pfc`) work: urfave/cli stops at the first positional
// argument, so the positional words are moved after the flags. Flags take a
// value unless they are boolean ones.
func flagsFirst(args []string) []string {
	if len(args) < 3 || !(args[1] == "profile" && args[2] == "show" || args[1] == "seccomp" && args[2] == "export") {
		return args
	}
	boolean := map[string]bool{"-h": true, "--help": true, "--audit": true, "-audit": true, "--seccomp-audit": true, "-seccomp-audit": true}
	flags, names := []string{}, []string{}
	for i := 3; i < len(args); i++ {
		a := args[i]
		switch {
		case !strings.HasPrefix(a, "-") || a == "-":
			names = append(names, a)
		case strings.Contains(a, "=") || boolean[a] || i+1 == len(args):
			flags = append(flags, a)
		default:
			flags = append(flags, a, args[i+1])
			i++
		}
	}
	return append(append(args[:3:3], flags...), names...)
}

// oneLine keeps an error to the one line the user gets; a profile with
// several problems is the exception, one line each.
func oneLine(err error) string {
	var perrs profiles.Errors
	if errors.As(err, &perrs) {
		return err.Error()
	}
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

// overrideFlags are the flags that change a profile, for run and for
// profile show (which prints the effective policy with the same flags).
func overrideFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, Value: "default", Usage: "profile `NAME` or path to a .toml file (jail profiles lists them)"},
		&cli.StringFlag{Name: "workspace", Usage: "bind host `DIR` read-write at /workspace"},
		&cli.StringFlag{Name: "audit-log", Usage: "append one JSON line per run to `FILE`"},
		&cli.StringFlag{Name: "secrets", Usage: "put the keys of `FILE` (TOML or KEY=value lines, mode 0600, yours) into the command's environment"},
		&cli.StringFlag{Name: "session", Usage: "use session `ID`'s workspace (kept across calls; made on first use)"},
		&cli.StringSliceFlag{Name: "bind", Usage: "bind host `SRC[:DST]` read-write (repeatable)"},
		&cli.StringSliceFlag{Name: "ro-bind", Usage: "bind host `SRC[:DST]` read-only (repeatable)"},
		&cli.StringSliceFlag{Name: "tmpfs", Usage: "mount a fresh tmpfs at `DST[:SIZE]` (repeatable)"},
		&cli.StringSliceFlag{Name: "env", Usage: "set `K=V` in the command's environment (repeatable)"},
		&cli.StringSliceFlag{Name: "keep-env", Usage: "pass host variable `K` through if set (repeatable)"},
		&cli.StringFlag{Name: "cwd", Usage: "working `DIR` inside the jail"},
		&cli.StringFlag{Name: "hostname", Usage: "the jail's host`NAME`"},
		&cli.StringFlag{Name: "time-limit", Usage: "kill the whole jail after `DURATION` (e.g. 30s, 10m; 0 for none)"},
		&cli.StringFlag{Name: "memory", Usage: "memory limit of the whole jail, `SIZE` (e.g. 512M, 2G, unlimited); no swap"},
		&cli.StringFlag{Name: "pids", Usage: "at most `N` processes and threads in the jail at once (or unlimited)"},
		&cli.StringFlag{Name: "cpu", Usage: "CPU quota of the whole jail in `CORES` (e.g. 0.5, 2; or unlimited)"},
		&cli.StringFlag{Name: "max-output", Usage: "cap each of stdout and stderr at `BYTES` (e.g. 1M); the rest is dropped and counted"},
		&cli.StringFlag{Name: "network", Usage: "`MODE` none (only loopback), allowlist (jail's proxy to --allow hosts) or host"},
		&cli.StringSliceFlag{Name: "allow", Usage: "let the jail reach `HOST[:PORT]` (or *.DOMAIN) through jail's proxy (repeatable; implies --network allowlist)"},
		&cli.StringSliceFlag{Name: "pin-host", Usage: "resolve `NAME=ADDR` without DNS, for the proxy (repeatable)"},
		&cli.StringFlag{Name: "limits-mode", Usage: "`MODE` enforce (fail when cgroups are out of reach) or best-effort (rlimit stand-ins)"},
		&cli.StringFlag{Name: "seccomp", Usage: "seccomp `POLICY` to run under (jail seccomp list), or none"},
		&cli.BoolFlag{Name: "seccomp-audit", Usage: "let through what the policy denies, reporting each call in the status record"},
	}
}

func runFlags() []cli.Flag {
	return append(overrideFlags(),
		&cli.StringFlag{Name: "status-json", Usage: "write the run's status record to `PATH` (or fd:N)"},
	)
}

const runExample = `Example:
   jail -p agent --workspace "$PWD" -- bash -c 'pytest -q'
   jail -p default --time-limit 30s --status-json /tmp/st.json -- python3 -c 'print(1)'`

func newApp(started time.Time, command []string) *cli.App {
	run := func(c *cli.Context) error { return runCommand(c, started, command) }
	return &cli.App{
		Name:      "jail",
		Usage:     "run one command in one fresh, throw-away Linux sandbox",
		UsageText: "jail [-p PROFILE] [overrides] -- CMD [ARGS...]\n\n" + runExample,
		Version:   version,
		// Flags and the command are parsed by hand around "--"; slice
		// flags keep commas (--env A=b,c).
		DisableSliceFlagSeparator: true,
		HideVersion:               true,
		Flags:                     runFlags(),
		Action:                    run,
		ExitErrHandler:            func(*cli.Context, error) {},
		Commands: []*cli.Command{
			{
				Name:      "run",
				Usage:     "run CMD in a jail (the default command)",
				UsageText: "jail run [-p PROFILE] [overrides] -- CMD [ARGS...]\n\n" + runExample,
				Flags:     runFlags(),
				Action:    run,
			},
			{
				Name:      "profiles",
				Usage:     "list the built-in and user profiles",
				UsageText: "jail profiles\n\nExample:\n   JAIL_PROFILE_PATH=./profiles jail profiles",
				Action:    listProfiles,
			},
			{
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
			},
			seccompCommand(),
			sessionsCommand(),
			auditCommand(),
			{
				Name:      "sh",
				Usage:     "run bash -c CMD in a jail: the shell for an agent's bash tool (also a link named jail-sh)",
				UsageText: "jail sh -c 'COMMAND' [NAME [ARGS...]]\n\nProfile $JAIL_PROFILE (default agent); workspace: session $JAIL_SESSION, else the current directory.",
				Action: func(*cli.Context) error {
					return &exitStatus{code: exitJail, msg: "usage: jail sh -c 'COMMAND'"}
				},
			},
			{
				Name:      "check",
				Usage:     "check that this host and caller can run jails; print the fix for what is missing",
				UsageText: "jail check\n\nExample:\n   jail check && echo ready",
				Action: func(c *cli.Context) error {
					if !preflight.Run(c.App.Writer) {
						return &exitStatus{code: exitCheckFails}
					}
					return nil
				},
			},
			{
				Name:      "version",
				Usage:     "print jail's version",
				UsageText: "jail version\n\nExample:\n   jail version",
				Action: func(c *cli.Context) error {
					fmt.Fprintf(c.App.Writer, "jail %s\n", version)
					return nil
				},
			},
		},
	}
}

// loadProfile loads the named profile and applies the flags to it. With
// --session the workspace is the session's (made on first use), and the
// session stays locked (shared) until the run ends: the lock's fd is
// inherited by the runner.
func loadProfile(c *cli.Context, name string) (*profiles.Profile, error) {
	if err := emptyFlags(c); err != nil {
		return nil, err
	}
	p, err := profiles.Load(name, profiles.Options{SearchPath: profiles.DefaultSearchPath(os.Environ())})
	if err != nil {
		return nil, err
	}
	workspace := c.String("workspace")
	if id := c.String("session"); id != "" {
		if workspace != "" {
			return nil, errors.New("--session and --workspace: a session has its own workspace")
		}
		var dir string
		if workspace, dir, err = openSession(p, id); err != nil {
			return nil, err
		}
		// A session may name its own secrets: STATE/sessions/ID/secrets,
		// when there (a profile's or --secrets wins).
		if f := filepath.Join(dir, "secrets"); p.Secrets.File == "" && c.String("secrets") == "" {
			if _, err := os.Lstat(f); err == nil {
				p.Secrets.File = f
			}
		}
	}
	cwd, _ := os.Getwd()
	err = p.Apply(profiles.Overrides{
		Workspace:    workspace,
		Binds:        c.StringSlice("bind"),
		ROBinds:      c.StringSlice("ro-bind"),
		Tmpfs:        c.StringSlice("tmpfs"),
		Env:          c.StringSlice("env"),
		KeepEnv:      c.StringSlice("keep-env"),
		Cwd:          c.String("cwd"),
		Hostname:     c.String("hostname"),
		TimeLimit:    c.String("time-limit"),
		Memory:       c.String("memory"),
		Pids:         c.String("pids"),
		CPU:          c.String("cpu"),
		MaxOutput:    c.String("max-output"),
		LimitsMode:   c.String("limits-mode"),
		Network:      c.String("network"),
		Allow:        c.StringSlice("allow"),
		PinHosts:     c.StringSlice("pin-host"),
		AuditLog:     c.String("audit-log"),
		Secrets:      c.String("secrets"),
		Seccomp:      c.String("seccomp"),
		SeccompAudit: c.Bool("seccomp-audit"),
		Cwd0:         cwd,
	})
	if err == nil {
		for _, w := range p.Seccomp.Warnings {
			fmt.Fprintln(os.Stderr, "jail: warning:", w)
		}
	}
	return p, err
}

// emptyFlags refuses a flag given an empty value (--workspace "",
// --session "", --status-json ""): an empty variable in a caller's script
// is a mistake, never "the current directory" or "none".
func emptyFlags(c *cli.Context) error {
	for _, name := range c.FlagNames() {
		if v, ok := c.Value(name).(string); ok && v == "" {
			dash := "--"
			if len(name) == 1 {
				dash = "-"
			}
			return fmt.Errorf("%s%s \"\": must not be empty", dash, name)
		}
	}
	return nil
}

func runCommand(c *cli.Context, started time.Time, command []string) error {
	if c.NArg() > 0 {
		return &exitStatus{code: exitJail, msg: fmt.Sprintf("unexpected %q before --: the command goes after -- (jail -p PROFILE -- CMD...)", c.Args().First())}
	}
	if len(command) == 0 {
		return &exitStatus{code: exitJail, msg: "no command: give it after -- (jail -p PROFILE -- CMD...)"}
	}
	if command[0] == "" {
		return &exitStatus{code: exitJail, msg: "empty command: the program to run after -- is \"\""}
	}
	statusTo := c.String("status-json")
	cacheDir := plancache.Dir()
	p, err := loadProfile(c, c.String("profile"))
	var cfg jail.Config
	if err == nil {
		cfg, err = p.Config(command, os.Environ())
		cfg.Session = c.String("session")
	}
	if err == nil && p.Secrets.File != "" {
		// Into the command's environment and nowhere else: never the
		// host's variables, never a cached plan on disk.
		cfg.Env, cfg.SecretKeys, err = secrets.Env(p.Secrets.File, cfg.Env)
	}
	var plan *jail.Plan
	if err == nil {
		cfg.ProfileHash = p.Hash()
		plan, err = jail.NewPlan(cfg, jail.PlanOptions{
			Protected:    []string{plancache.Protected()},
			SeccompCache: filepath.Join(plancache.Protected(), "seccomp"),
			Version:      version,
		})
	}
	if err == nil {
		// Cached for the next identical invocation, which then runs
		// without starting Go; a cache that cannot be written only
		// costs speed.
		args, _ := splitCommand(os.Args)
		if key, ok, kerr := plancache.Key(args, os.Environ()); ok && kerr == nil && len(cfg.SecretKeys) == 0 {
			plancache.Store(cacheDir, key, deps(p, plan), plan.Data)
		}
		err = plan.Exec(os.Args, statusTo, started) // returns only if it fails
	}
	if statusTo != "" {
		var cfgp *jail.Config
		if p != nil {
			cfgp = &cfg
		}
		if f, serr := openStatus(statusTo); serr == nil {
			f.Write(jail.NewStatus(cfgp, nil, err).JSON())
			f.Close()
		}
	}
	return err
}

// deps are every host path a run's plan was made from: the profile files
// (and where they were looked for) and what mount resolution met.
func deps(p *profiles.Profile, plan *jail.Plan) plancache.Deps {
	d := plancache.Deps{}
	for path, fi := range p.Files {
		d[path] = fi
	}
	for path, fi := range plan.Deps {
		d[path] = fi
	}
	return d
}

// openStatus opens where the status record goes: a path, or fd:N.
func openStatus(to string) (io.WriteCloser, error) {
	if to == "" {
		return nil, nil
	}
	if n, ok := strings.CutPrefix(to, "fd:"); ok {
		fd, err := strconv.Atoi(n)
		if err != nil || fd < 1 {
			return nil, fmt.Errorf("--status-json %s: not a file descriptor number", to)
		}
		f := os.NewFile(uintptr(fd), to)
		if _, err := f.Stat(); err != nil {
			return nil, fmt.Errorf("--status-json %s: %w", to, err)
		}
		return f, nil
	}
	// O_NOFOLLOW: a symlink planted where the record goes (in a
	// workspace, say) must not make jail write through it.
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--status-json: %w", err)
	}
	return f, nil
}

func listProfiles(c *cli.Context) error {
	entries, err := profiles.List(profiles.Options{SearchPath: profiles.DefaultSearchPath(os.Environ())})
	if err != nil {
		return err
	}
	printEntries(c, entries)
	return nil
}

func showProfile(c *cli.Context) error {
	name := c.String("profile")
	if c.NArg() > 1 {
		return &exitStatus{code: exitJail, msg: "profile show takes one profile name"}
	}
	if c.NArg() == 1 {
		name = c.Args().First()
	}
	p, err := loadProfile(c, name)
	if err != nil {
		return err
	}
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

// seccompCommand is `jail seccomp`: the policies, what they compile to,
// and importing a Docker/OCI profile.
func seccompCommand() *cli.Command {
	opts := func() profiles.Options {
		return profiles.Options{SearchPath: profiles.DefaultSearchPath(os.Environ())}
	}
	return &cli.Command{
		Name:      "seccomp",
		Usage:     "inspect seccomp policies",
		UsageText: "jail seccomp list|groups|show|export|import ...",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list the built-in and user seccomp policies",
				UsageText: "jail seccomp list\n\nExample:\n   jail seccomp list",
				Action: func(c *cli.Context) error {
					entries, err := policyfile.List(opts())
					if err != nil {
						return err
					}
					printEntries(c, entries)
					return nil
				},
			},
			{
				Name:      "groups",
				Usage:     "list the syscall groups policies may name (@mount, @namespaces, ...)",
				UsageText: "jail seccomp groups\n\nExample:\n   jail seccomp groups | less",
				Action: func(c *cli.Context) error {
					for _, name := range seccomp.GroupNames() {
						g := seccomp.Groups[name]
						fmt.Fprintf(c.App.Writer, "%s\n    %s\n    %s\n", name, g.Doc, strings.Join(g.Syscalls, " "))
					}
					return nil
				},
			},
			{
				Name:      "show",
				Usage:     "print a policy, resolved (extends merged), as TOML",
				UsageText: "jail seccomp show NAME\n\nExample:\n   jail seccomp show default",
				Action: func(c *cli.Context) error {
					p, err := onePolicy(c, opts())
					if err != nil {
						return err
					}
					_, err = c.App.Writer.Write(policyfile.Encode(p))
					return err
				},
			},
			{
				Name:      "export",
				Usage:     "write a policy compiled for this machine: raw BPF, or libseccomp's readable PFC",
				UsageText: "jail seccomp export NAME --format bpf|pfc [--audit]\n\nExample:\n   jail seccomp export default --format pfc | less",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "format", Value: "pfc", Usage: "`bpf` (struct sock_filter[]) or pfc"},
					&cli.BoolFlag{Name: "audit", Usage: "as --seccomp-audit would compile it"},
				},
				Action: func(c *cli.Context) error {
					p, err := onePolicy(c, opts())
					if err != nil {
						return err
					}
					if p.None {
						return &exitStatus{code: exitJail, msg: "policy none compiles to no filter at all"}
					}
					mode := seccomp.Mode{Audit: c.Bool("audit")}
					switch c.String("format") {
					case "pfc":
						return seccomp.ExportPFC(p, mode, os.Stdout)
					case "bpf":
						prog, err := seccomp.Compile(p, mode)
						if err != nil {
							return err
						}
						_, err = os.Stdout.Write(prog.BPF)
						return err
					}
					return &exitStatus{code: exitJail, msg: fmt.Sprintf("--format %q: bpf or pfc", c.String("format"))}
				},
			},
			{
				Name:      "import",
				Usage:     "convert a Docker/OCI seccomp profile (JSON) into a jail policy (TOML)",
				UsageText: "jail seccomp import FILE.json\n\nExample:\n   jail seccomp import docker-default.json > ~/.config/jail/profiles/seccomp/docker.toml",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return &exitStatus{code: exitJail, msg: "seccomp import takes one JSON file"}
					}
					data, err := os.ReadFile(c.Args().First())
					if err != nil {
						return err
					}
					p, warnings, err := seccomp.ImportOCI(data, runtime.GOARCH)
					if err != nil {
						return fmt.Errorf("%s: %w", c.Args().First(), err)
					}
					for _, w := range warnings {
						fmt.Fprintln(os.Stderr, "jail: warning:", w)
					}
					p.Name = strings.TrimSuffix(filepath.Base(c.Args().First()), ".json")
					_, err = c.App.Writer.Write(policyfile.Encode(p))
					return err
				},
			},
		},
	}
}

func onePolicy(c *cli.Context, opts profiles.Options) (*seccomp.Policy, error) {
	if c.NArg() != 1 {
		return nil, &exitStatus{code: exitJail, msg: "give one policy name (jail seccomp list)"}
	}
	return policyfile.Load(c.Args().First(), opts)
}

func printEntries(c *cli.Context, entries []profiles.Entry) {
	w := 0
	for _, e := range entries {
		w = max(w, len(e.Name))
	}
	for _, e := range entries {
		fmt.Fprintf(c.App.Writer, "%-*s  %s  (%s)\n", w, e.Name, e.Description, e.Source)
	}
}

// openSession opens session id's workspace for this run, owned by the
// jail's host ids, and keeps its lock held across the exec into the runner.
func openSession(p *profiles.Profile, id string) (string, string, error) {
	state, err := sessions.StateDir(os.Getenv, os.Geteuid())
	if err != nil {
		return "", "", err
	}
	uid, gid := os.Geteuid(), os.Getegid()
	if uid == 0 {
		uid, gid = int(p.User.HostUID), int(p.User.HostGID)
	}
	s, lock, err := sessions.Open(state, id, uid, gid)
	if err != nil {
		return "", "", err
	}
	// A duplicate, not close-on-exec and out of the garbage collector's
	// reach: the runner holds the lock until jail ends (the init stage
	// closes every fd it inherits).
	_, err = unix.Dup(int(lock.Fd()))
	lock.Close()
	if err != nil {
		return "", "", fmt.Errorf("session %s: %w", id, err)
	}
	return s.Workspace(), s.Dir, nil
}

// shMain is `jail sh -c CMD [NAME [ARGS...]]` or `jail sh CMD` (also a
// link named jail-sh):
// a shell for an agent's bash tool. It runs bash -c (sh -c when the host
// has no bash) in the profile $JAIL_PROFILE (default agent), with the
// workspace of session $JAIL_SESSION, or else the current directory;
// stdin, stdout, stderr and the exit status pass through. It execs jail
// itself, so a repeated call replays its cached plan without starting Go.
func shMain(args []string) {
	// One argument is the command itself, as a command prefix gets it
	// (Claude Code's CLAUDE_CODE_SHELL_PREFIX passes the command as $1).
	if len(args) == 1 && args[0] != "-c" {
		args = []string{"-c", args[0]}
	}
	if len(args) < 2 || args[0] != "-c" {
		fmt.Fprintln(os.Stderr, "jail: usage: jail sh -c 'COMMAND' [NAME [ARGS...]], or jail sh 'COMMAND' (profile $JAIL_PROFILE, session $JAIL_SESSION)")
		os.Exit(exitJail)
	}
	profile := os.Getenv("JAIL_PROFILE")
	if profile == "" {
		profile = "agent"
	}
	argv := []string{"jail", "-p", profile}
	if id := os.Getenv("JAIL_SESSION"); id != "" {
		argv = append(argv, "--session", id)
	} else {
		cwd, err := os.Getwd()
		if err != nil {
			fmt.Fprintln(os.Stderr, "jail: sh: the current directory:", err)
			os.Exit(exitJail)
		}
		argv = append(argv, "--workspace", cwd)
	}
	shell := "sh"
	if _, err := os.Stat("/usr/bin/bash"); err == nil {
		shell = "bash"
	} else if _, err := os.Stat("/bin/bash"); err == nil {
		shell = "bash"
	}
	// "--" before the command: one starting with "-" is a command, not
	// the shell's option.
	argv = append(append(argv, "--", shell, "-c", "--"), args[1:]...)
	err := syscall.Exec("/proc/self/exe", argv, os.Environ())
	fmt.Fprintln(os.Stderr, "jail: sh:", err)
	os.Exit(exitJail)
}

// sessionsCommand is `jail sessions list|rm|gc`.
func sessionsCommand() *cli.Command {
	state := func() (string, error) { return sessions.StateDir(os.Getenv, os.Geteuid()) }
	return &cli.Command{
		Name:  "sessions",
		Usage: "list and remove agent sessions (their workspaces, kept across calls)",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "one line per session: id, size, last use, in use",
				UsageText: "jail sessions list",
				Action: func(c *cli.Context) error {
					dir, err := state()
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
				},
			},
			{
				Name:      "rm",
				Usage:     "remove a session and its workspace (refused while a call of it runs)",
				UsageText: "jail sessions rm ID",
				Action: func(c *cli.Context) error {
					dir, err := state()
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
					dir, err := state()
					if err != nil {
						return err
					}
					gone, err := sessions.GC(dir, c.Duration("older-than"))
					for _, id := range gone {
						fmt.Fprintln(c.App.Writer, "removed", id)
					}
					return err
				},
			},
		},
	}
}

// auditCommand is `jail audit tail|summary`: reading an audit log.
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
				Action: func(c *cli.Context) error {
					recs, bad, err := audit.Read(c.String("log"), time.Time{})
					if err != nil {
						return err
					}
					if bad > 0 {
						fmt.Fprintf(c.App.ErrWriter, "jail: %d lines of the log are not records (cut short?), skipped\n", bad)
					}
					if n := c.Int("n"); len(recs) > n {
						recs = recs[len(recs)-n:]
					}
					for _, r := range recs {
						fmt.Fprintln(c.App.Writer, r.Line())
					}
					return nil
				},
			},
			{
				Name:      "summary",
				Usage:     "counts by verdict and the top denied syscalls and hosts",
				UsageText: "jail audit summary -f FILE [--since 1h]",
				Flags:     []cli.Flag{file, &cli.DurationFlag{Name: "since", Value: 24 * time.Hour, Usage: "`AGE` of the oldest record counted"}},
				Action: func(c *cli.Context) error {
					recs, bad, err := audit.Read(c.String("log"), time.Now().Add(-c.Duration("since")))
					if err != nil {
						return err
					}
					if bad > 0 {
						fmt.Fprintf(c.App.Writer, "unreadable lines (cut short?): %d\n", bad)
					}
					audit.Summarize(recs).Print(c.App.Writer)
					return nil
				},
			},
		},
	}
}
