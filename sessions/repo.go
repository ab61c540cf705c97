package sessions

// The caller's repository (REPO of create --git): what it is, checked
// before anything is made, each refusal with its fix.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Repo is a repository a session is made from or exported to.
type Repo struct {
	Top     string // the working tree's top directory, or a bare repository's
	Objects string // its object directory, absolute
	Bare    bool
	Format  string // object format: sha1 or sha256
}

func (r Repo) git() gitRun { return gitRun{dir: r.Top} }

// OpenRepo inspects path, which must be a repository's top directory (a
// working tree's, or a bare repository: both are supported, a bare one
// has no working tree to be dirty). git looks no higher than path
// (GIT_CEILING_DIRECTORIES): a directory inside some other repository
// is not taken for it.
//
// It refuses, before running any git in it, a repository git would read
// hostile configuration from: one under the state directory state (a
// session's workspace is a jail's to write: its hooks and filters would
// run on the host) and, for root, one another user owns (its config would
// run as root; git's own safe.directory refuses it too, less clearly).
func OpenRepo(state, path string) (Repo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Repo{}, fmt.Errorf("repository %s: %w", path, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return Repo{}, fmt.Errorf("repository %s: not a directory", path)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return Repo{}, fmt.Errorf("repository %s: %w", path, err)
	}
	if err := trusted(state, path, abs); err != nil {
		return Repo{}, err
	}
	g := gitRun{dir: abs, env: []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(abs)}}
	out, err := g.run("rev-parse", "--is-bare-repository", "--is-inside-git-dir", "--git-path", "objects", "--show-object-format")
	if err != nil {
		return Repo{}, fmt.Errorf("repository %s: not a git repository (%v); fix: name the top directory of a git repository (git init makes one)", path, err)
	}
	f := strings.Split(out, "\n")
	if len(f) != 4 {
		return Repo{}, fmt.Errorf("repository %s: git rev-parse said %q", path, out)
	}
	r := Repo{Top: abs, Bare: f[0] == "true", Objects: f[2], Format: f[3]}
	if !filepath.IsAbs(r.Objects) {
		r.Objects = filepath.Join(abs, r.Objects)
	}
	if !r.Bare {
		if f[1] == "true" {
			return Repo{}, fmt.Errorf("repository %s: a .git directory; fix: name its working tree's top directory", path)
		}
		top, err := g.run("rev-parse", "--show-toplevel")
		if err != nil || filepath.Clean(top) != abs {
			return Repo{}, fmt.Errorf("repository %s: not the top of its working tree (%s); fix: name the top directory", path, top)
		}
	}
	r.Top = abs
	// The session gets a copy of the object directory: objects kept
	// elsewhere (borrowed through alternates, or left behind by a partial
	// or shallow clone) would be missing from it.
	if _, err := os.Lstat(filepath.Join(r.Objects, "info", "alternates")); err == nil {
		return Repo{}, fmt.Errorf("repository %s borrows objects from another (objects/info/alternates); fix: git -C %s repack -a -d && rm %s",
			path, abs, filepath.Join(r.Objects, "info", "alternates"))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Repo{}, fmt.Errorf("repository %s: %w", path, err)
	}
	if out, _ := r.git().run("rev-parse", "--is-shallow-repository"); out == "true" {
		return Repo{}, fmt.Errorf("repository %s is shallow (part of its history is missing); fix: git -C %s fetch --unshallow", path, abs)
	}
	if out, _ := r.git().run("config", "--get", "extensions.partialClone"); out != "" {
		return Repo{}, fmt.Errorf("repository %s is a partial clone (objects are missing); fix: git -C %s fetch --refetch, or clone it in full", path, abs)
	}
	return r, nil
}

// trusted refuses a repository whose configuration jail must not let git
// read on the host (OpenRepo says which). A session's workspace is known
// by what it is, not by its path: any directory of the repository's path
// that is jail's state directory (by device and inode: a bind mount or
// another JAIL_STATE_DIR does not hide it), or a "workspace" beside a
// session's "lock" or "meta.json".
func trusted(state, path, abs string) error {
	inSession := fmt.Errorf("repository %s is in a jail session's workspace, where a jail writes: git run there on the host "+
		"would run what the jail configured (hooks, filters); fix: export the session into your repository (jail sessions export) and make the new session from that", path)
	var sd unix.Stat_t
	haveState := unix.Stat(state, &sd) == nil
	for dir := abs; ; dir = filepath.Dir(dir) {
		var st unix.Stat_t
		if unix.Stat(dir, &st) == nil && haveState && st.Dev == sd.Dev && st.Ino == sd.Ino {
			return inSession
		}
		if filepath.Base(dir) == "workspace" {
			for _, mark := range []string{"lock", "meta.json"} {
				if fi, err := os.Lstat(filepath.Join(filepath.Dir(dir), mark)); err == nil && fi.Mode().IsRegular() {
					return inSession
				}
			}
		}
		if dir == "/" || dir == "." {
			break
		}
	}
	if os.Geteuid() != 0 {
		return nil
	}
	// git's own check (safe.directory) refuses these for root too, but
	// says "not a git repository"; its SUDO_UID exception is not passed
	// to a root's git (gitEnv).
	for _, p := range []string{abs, filepath.Join(abs, ".git")} {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			if p == abs {
				return fmt.Errorf("repository %s: %w", path, err)
			}
			continue
		}
		if st.Uid != 0 {
			return fmt.Errorf("repository %s: %s belongs to uid %d, not root: git run in it as root would run its owner's hooks and filters as root, so jail does not; "+
				"fix: run jail sessions as uid %d, or give root a clone of its own", path, p, st.Uid, st.Uid)
		}
	}
	return nil
}

// Commit resolves ref to a commit of r.
func (r Repo) Commit(ref string) (string, error) {
	for _, c := range ref {
		if c < 0x20 || c == 0x7f {
			return "", fmt.Errorf("--from %q: control characters", ref)
		}
	}
	out, err := r.git().run("rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil || !isHex(out) {
		if ref == "HEAD" {
			return "", fmt.Errorf("repository %s has no commit at HEAD; fix: commit something first, or name one with --from REF", r.Top)
		}
		return "", fmt.Errorf("repository %s: %q is not a commit there; fix: --from a branch, tag or commit of it (git -C %s log --oneline)", r.Top, ref, r.Top)
	}
	return out, nil
}

// Branch is the commit branch name points to in r, "" when there is none.
func (r Repo) Branch(name string) (string, error) {
	out, err := r.git().run("rev-parse", "--verify", "--quiet", "refs/heads/"+name)
	if exitCode(err) == 1 {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("repository %s: %w", r.Top, err)
	}
	return out, nil
}

// Dirty says whether r's index has changes staged against HEAD. It reads
// no file of the working tree: comparing one with the index can run the
// repository's clean filters (a racily clean entry is read through them),
// and a repository a jail once had a writable bind to holds a jail's
// filters. Changes not staged are not seen; the note says so.
func (r Repo) Dirty() bool {
	if r.Bare {
		return false
	}
	_, err := r.git().run("diff-index", "--cached", "--quiet", "--ignore-submodules", "HEAD", "--")
	return exitCode(err) == 1
}

// CheckedOut says whether branch name is r's checked-out branch.
func (r Repo) CheckedOut(name string) bool {
	if r.Bare {
		return false
	}
	out, _ := r.git().run("symbolic-ref", "--quiet", "HEAD")
	return out == "refs/heads/"+name
}

// inUse says how a worktree of r uses branch ref, which update-ref (unlike
// a fetch into it) does not ask: checked out in a linked worktree, or
// being rebased or bisected in any (a rebase shows HEAD detached, and its
// --abort would reset the branch, undoing the export); "" when none does.
func (r Repo) inUse(ref string) (string, error) {
	wt, err := r.git().run("worktree", "list", "--porcelain")
	if err != nil {
		return "", fmt.Errorf("repository %s: its worktrees: %w", r.Top, err)
	}
	if slices.Contains(strings.Split(wt, "\n"), "branch "+ref) {
		return "checked out in a worktree", nil
	}
	common, err := r.git().run("rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", fmt.Errorf("repository %s: %w", r.Top, err)
	}
	dirs := []string{common}
	if ents, err := os.ReadDir(filepath.Join(common, "worktrees")); err == nil {
		for _, e := range ents {
			dirs = append(dirs, filepath.Join(common, "worktrees", e.Name()))
		}
	}
	branch := strings.TrimPrefix(ref, "refs/heads/")
	for _, d := range dirs {
		for _, f := range []struct{ file, want, what string }{
			{"rebase-merge/head-name", ref, "being rebased"}, {"rebase-apply/head-name", ref, "being rebased"},
			{"BISECT_START", branch, "being bisected"},
		} {
			if b, err := os.ReadFile(filepath.Join(d, f.file)); err == nil && strings.TrimSpace(string(b)) == f.want {
				return f.what, nil
			}
		}
	}
	return "", nil
}

// identity is r's user.name and user.email (the caller's, from r's config
// or theirs), given to the session's repository so a jail can commit.
func (r Repo) identity() (name, email string) {
	name, _ = r.git().run("config", "--get", "user.name")
	email, _ = r.git().run("config", "--get", "user.email")
	return name, email
}
