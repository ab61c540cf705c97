// Bubblewrap command lines with the isolation of jail's profiles, for
// the comparison.
package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/mount"
)

// bwrapSystemDirs are the host system trees jail's default profile mounts
// read-only (or recreates as symlinks on merged-/usr hosts).
var bwrapSystemDirs = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
}

// bwrapEtcFiles are the /etc entries jail's default profile mounts
// read-only, when the host has them.
var bwrapEtcFiles = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/alternatives", "/etc/localtime", "/etc/ssl",
	"/etc/ca-certificates", "/etc/nsswitch.conf", "/etc/protocols",
	"/etc/services", "/etc/mime.types", "/etc/os-release",
	"/etc/bash.bashrc", "/etc/profile", "/etc/inputrc", "/etc/terminfo",
	"/etc/gai.conf", "/etc/host.conf", "/etc/python3",
}

// bwrapArgs returns the bwrap arguments (without bwrap itself) that run
// argv with the same isolation as jail's default profile: every namespace,
// die with the parent, a new session, an empty environment, the system trees
// and /etc files read-only (symlinks recreated as symlinks, missing ones
// skipped), a fresh /proc, a minimal /dev and a tmpfs /tmp.
//
// Host paths are looked up under root, which is "/" for a real run; the
// paths inside the sandbox are always the absolute ones listed above.
func bwrapArgs(root string, argv []string) ([]string, error) {
	var specs []mount.Spec
	for _, p := range slices.Concat(bwrapSystemDirs, bwrapEtcFiles) {
		specs = append(specs, mount.Spec{Kind: mount.ReadOnlyBind, Src: p, Dst: p, Optional: true})
	}
	specs = append(specs, mount.Spec{Kind: mount.Proc, Dst: "/proc"}, mount.Spec{Kind: mount.Dev, Dst: "/dev"},
		mount.Spec{Kind: mount.Tmpfs, Dst: "/tmp"})
	ms, err := hostMounts(specs, root, "")
	if err != nil {
		return nil, fmt.Errorf("bwrap arguments: %w", err)
	}
	args := []string{"--unshare-all", "--die-with-parent", "--new-session", "--clearenv"}
	return slices.Concat(args, bwrapMountArgs(ms), argv), nil
}

// bwrapConfigArgs returns the bwrap arguments that run a jail's
// configuration c as far as bwrap can express it: every namespace, a user
// namespace with c's uid and gid (mapped to the caller, as bwrap does),
// c's hostname, session, environment, working directory, and its mounts as
// hostMounts resolved them (ms). Not expressed: the seccomp filter, the
// cgroup limits, rlimits and time limit, /proc's masks, the host uid a root
// caller's jail runs as.
func bwrapConfigArgs(c jail.Config, ms []hostMount) []string {
	args := []string{"--unshare-all", "--unshare-user", "--die-with-parent"}
	if c.NewSession {
		args = append(args, "--new-session")
	}
	args = append(args, "--uid", strconv.FormatUint(uint64(c.UID), 10), "--gid", strconv.FormatUint(uint64(c.GID), 10))
	if c.Hostname != "" {
		args = append(args, "--hostname", c.Hostname)
	}
	args = append(args, "--clearenv")
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	args = append(args, bwrapMountArgs(ms)...)
	if c.Dir != "" {
		args = append(args, "--chdir", c.Dir)
	}
	return append(args, c.Argv...)
}

// bwrapMountArgs returns the bwrap arguments that make the mounts ms, in
// their order.
func bwrapMountArgs(ms []hostMount) []string {
	var args []string
	for _, m := range ms {
		switch m.Kind {
		case mount.Bind:
			args = append(args, "--bind", m.Src, m.Dst)
		case mount.ReadOnlyBind:
			args = append(args, "--ro-bind", m.Src, m.Dst)
		case mount.Symlink:
			args = append(args, "--symlink", m.Target, m.Dst)
		case mount.Proc:
			args = append(args, "--proc", m.Dst)
		case mount.Dev:
			args = append(args, "--dev", m.Dst)
		case mount.Tmpfs:
			if m.Size > 0 {
				args = append(args, "--size", strconv.FormatInt(m.Size, 10))
			}
			args = append(args, bwrapPerms(m.Mode)...)
			args = append(args, "--tmpfs", m.Dst)
		case mount.Dir:
			args = append(args, bwrapPerms(m.Mode)...)
			args = append(args, "--dir", m.Dst)
		}
	}
	return args
}

// bwrapPerms is the --perms argument for a mode, none for the default (0).
func bwrapPerms(mode uint32) []string {
	if mode == 0 {
		return nil
	}
	return []string{"--perms", fmt.Sprintf("%04o", mode)}
}

// shellQuote renders argv as one line a POSIX shell reads back as argv.
func shellQuote(argv []string) string {
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellWord(a)
	}
	return strings.Join(quoted, " ")
}

// shellWord quotes s for a POSIX shell when it needs quoting.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, safeShellChars) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// safeShellChars are the characters a shell word may hold unquoted.
const safeShellChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%"
