package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	args := []string{"--unshare-all", "--die-with-parent", "--new-session", "--clearenv"}
	for _, p := range slices.Concat(bwrapSystemDirs, bwrapEtcFiles) {
		a, err := bwrapMountArgs(root, p)
		if err != nil {
			return nil, err
		}
		args = append(args, a...)
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp")
	return append(args, argv...), nil
}

// bwrapMountArgs returns the arguments that put the host's path p (looked up
// under root) at p in the sandbox: "--symlink TARGET p" when it is a symlink,
// "--ro-bind HOST p" when it is anything else, nothing when it is missing.
func bwrapMountArgs(root, p string) ([]string, error) {
	host := filepath.Join(root, p)
	fi, err := os.Lstat(host)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("bwrap arguments: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(host)
		if err != nil {
			return nil, fmt.Errorf("bwrap arguments: %w", err)
		}
		return []string{"--symlink", target, p}, nil
	default:
		return []string{"--ro-bind", host, p}, nil
	}
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
