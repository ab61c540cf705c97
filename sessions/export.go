package sessions

// Reading a session's branch back on the host (diff, export), treating the
// session's repository as hostile: a jail has written its .git, so its
// config may name hooks, core.fsmonitor, core.sshCommand, filter drivers,
// diff.external, textconv, a pager, includeIf paths. None of it may run on
// the host, so git never runs on the host with that .git as its
// repository. Instead:
//
//  1. In the session's own jail (its profile, no network), git makes a
//     bundle of the branch minus the base commit and writes it to stdout;
//     whatever the session's config runs there runs in the jail.
//  2. On the host, a scratch bare repository jail makes (no config but its
//     own, none of the caller's or the system's; its objects borrow REPO's
//     through alternates, so the bundle holds only the session's new
//     objects) fetches the bundle into one ref. A bundle is data: git
//     checks it as it would a pack from the network (fsck on), and no hook
//     of the bundle's or the session's is run.
//  3. diff runs in the scratch repository, with --no-ext-diff and
//     --no-textconv; export fetches its objects from the scratch
//     repository into REPO (into no ref) and sets the one branch by
//     update-ref with its old value, fast-forward only, hooks off.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// JailRun runs argv in session id's jail, in profile, with stdout going to
// stdout; a failure carries the jail's last line of stderr.
type JailRun func(profile, id string, stdout io.Writer, argv ...string) error

// Snapshot is a session's branch brought to the host.
type Snapshot struct {
	Meta Meta
	Repo Repo   // the repository it was made from
	Tip  string // the branch's commit
	git  gitRun // the scratch repository ("" dir when Tip is Base)
	tmp  string
}

// Close removes the scratch repository.
func (s *Snapshot) Close() error {
	if s.tmp == "" {
		return nil
	}
	return removeAll(s.tmp)
}

// Fetch brings session id's branch to the host, as above.
func Fetch(state, id string, jail JailRun) (*Snapshot, error) {
	m, ok, err := ReadMeta(state, id)
	if err != nil {
		return nil, err
	}
	if !ok {
		if _, err := os.Lstat(Dir(state, id)); err != nil {
			return nil, fmt.Errorf("session %q: %w (jail sessions list shows them)", id, ErrNoSession)
		}
		return nil, fmt.Errorf("session %s was not made from a repository; fix: jail sessions create ID --git REPO", id)
	}
	repo, err := OpenRepo(state, m.Repository)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	s := &Snapshot{Meta: m, Repo: repo}
	ref := "refs/heads/" + m.Branch
	out := Limited{N: 256} // a commit name, and no more
	if err := jail(m.Profile, id, &out, "git", "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}"); err != nil {
		return nil, fmt.Errorf("session %s: its branch %s: %w; fix: jail --session %s -- git switch %s", id, m.Branch, err, id, m.Branch)
	}
	tip := strings.TrimRight(out.String(), "\r\n ")
	if !isHex(tip) {
		return nil, fmt.Errorf("session %s: its branch %s: git rev-parse said %q", id, m.Branch, LastLine(tip))
	}
	if tip == m.Base {
		s.Tip = tip
		return s, nil
	}
	if s.tmp, err = os.MkdirTemp("", "jail-session-"); err != nil {
		return nil, err
	}
	if err := s.fetch(id, ref, jail); err != nil {
		s.Close()
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return s, nil
}

// fetch makes the bundle in the jail and fetches it into a scratch
// repository.
func (s *Snapshot) fetch(id, ref string, jail JailRun) error {
	bundle := filepath.Join(s.tmp, "branch.bundle")
	f, err := os.OpenFile(bundle, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = jail(s.Meta.Profile, id, f, "git", "bundle", "create", "--quiet", "-", "^"+s.Meta.Base, ref)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("bundle its branch %s: %w", s.Meta.Branch, err)
	}
	dir := filepath.Join(s.tmp, "git")
	if _, err := (gitRun{own: true}).run("init", "--quiet", "--bare", "--template=", "--object-format="+s.Repo.Format, dir); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "objects", "info", "alternates"), []byte(s.Repo.Objects+"\n"), 0o600); err != nil {
		return err
	}
	s.git = gitRun{dir: dir, own: true}
	if _, err := s.git.run("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--no-auto-maintenance",
		bundle, ref+":refs/jail/tip"); err != nil {
		return fmt.Errorf("fetch its branch %s: %w", s.Meta.Branch, err)
	}
	tip, err := s.git.run("rev-parse", "--verify", "refs/jail/tip^{commit}")
	if err != nil {
		return err
	}
	s.Tip = tip
	return nil
}

// What diff reads, at most: git diff loads both sides of each file whole,
// and a jail can commit files of any size that compress to nothing (4 GiB
// of zeros is 4 MB, a file of newlines costs xdiff ~40 bytes a line), as
// many paths as it likes sharing one blob. The sizes of the blobs a diff
// reads are added up before it runs, and the diff itself runs in 2 GiB of
// address space.
const (
	MaxDiffBytes = 64 << 20
	MaxDiffPaths = 100000
	diffMemKB    = 2 << 20
)

// Diff writes the branch's changes against its base, a unified diff; a
// branch past MaxDiffBytes or MaxDiffPaths is refused before git reads it.
func (s *Snapshot) Diff(w io.Writer) error {
	if s.Tip == s.Meta.Base {
		return nil
	}
	size, paths, err := s.diffSize()
	if err != nil {
		return err
	}
	if size > MaxDiffBytes || paths > MaxDiffPaths {
		return fmt.Errorf("session branch %s changes %d files of %d MiB in all: too large to diff on the host (at most %d files, %d MiB); "+
			"fix: look at it in the session (jail --session ID -- git diff --stat BASE), or export the branch", s.Meta.Branch, paths, size>>20, MaxDiffPaths, MaxDiffBytes>>20)
	}
	g := s.git
	g.stdout = w
	g.memKB = diffMemKB
	_, err = g.run("diff", "--no-ext-diff", "--no-textconv", "--no-color", "--end-of-options", s.Meta.Base, s.Tip)
	return err
}

// ErrNotFastForward: REPO's branch has commits the session's lacks.
var ErrNotFastForward = errors.New("not a fast-forward")

// Export sets REPO's branch to (default the session's branch name) to the
// session's commit, when that is a fast-forward (or the branch is new),
// and changes nothing else in REPO: its objects fetched from the scratch
// repository, the one ref set by update-ref, no hook run. It returns the
// ref.
func (s *Snapshot) Export(id, to string) (string, error) {
	if to == "" {
		to = s.Meta.Branch
	}
	if err := CheckBranch(to); err != nil {
		return "", err
	}
	ref := "refs/heads/" + to
	if s.Tip == s.Meta.Base {
		return "", fmt.Errorf("session %s: branch %s has no commit beyond its base %.12s: nothing to export; fix: commit in the session first (jail --session %s -- git commit -am MESSAGE)",
			id, s.Meta.Branch, s.Meta.Base, id)
	}
	// A symbolic ref would move the branch it points to, not itself.
	if _, err := s.Repo.git().run("symbolic-ref", "--quiet", ref); err == nil {
		return "", fmt.Errorf("session %s: %s in %s is a symbolic ref: export would move the branch it points to; fix: export --to a branch of its own", id, ref, s.Repo.Top)
	}
	if s.Repo.CheckedOut(to) {
		return "", fmt.Errorf("session %s: %s is the branch checked out in %s, whose working tree export would leave behind; fix: export --to another branch and merge it there", id, to, s.Repo.Top)
	}
	old, err := s.Repo.Branch(to)
	if err != nil {
		return "", err
	}
	if old == s.Tip {
		return ref, nil
	}
	if old != "" {
		if _, err := s.git.run("merge-base", "--is-ancestor", old, s.Tip); exitCode(err) == 1 {
			return "", fmt.Errorf("session %s: %s in %s is at %.12s, which the session's branch does not contain: %w; fix: export --to a new branch and merge it in %s",
				id, ref, s.Repo.Top, old, ErrNotFastForward, s.Repo.Top)
		} else if err != nil {
			return "", err
		}
	}
	busy, err := s.Repo.inUse(ref)
	if err != nil {
		return "", err
	}
	if busy != "" {
		return "", fmt.Errorf("session %s: %s is %s in %s, which export would leave behind; fix: export --to another branch and merge it there", id, to, busy, s.Repo.Top)
	}
	// The objects first, into no ref; then the one ref, by update-ref:
	// --no-deref never follows a symbolic ref (one made since the check
	// above is replaced, not followed), and the old value makes it a
	// compare-and-swap: a branch that moved meanwhile is not overwritten.
	if _, err := s.Repo.git().run("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--no-auto-maintenance",
		s.git.dir, "refs/jail/tip"); err != nil {
		return "", fmt.Errorf("session %s: export to %s in %s: %w", id, ref, s.Repo.Top, err)
	}
	if old == "" {
		old = strings.Repeat("0", len(s.Tip))
	}
	if _, err := s.Repo.git().run("update-ref", "--no-deref", "-m", "jail sessions export "+id, ref, s.Tip, old); err != nil {
		return "", fmt.Errorf("session %s: export to %s in %s (did it move meanwhile?): %w", id, ref, s.Repo.Top, err)
	}
	return ref, nil
}

// diffSize is what a diff of the branch reads: the sizes of both sides of
// every file it changes, from the trees alone (no blob is read), and how
// many files.
func (s *Snapshot) diffSize() (uint64, int, error) {
	raw, err := s.git.run("diff-tree", "-r", "-z", "--no-renames", "--raw", "--end-of-options", s.Meta.Base, s.Tip)
	if err != nil {
		return 0, 0, err
	}
	// ":MODE MODE OID OID STATUS\0PATH\0", one a file.
	var oids []string
	paths := 0
	f := strings.Split(raw, "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(f[i], ":"))
		if len(meta) < 4 {
			continue
		}
		paths++
		for _, m := range []int{0, 1} {
			if meta[m] != "160000" && strings.Trim(meta[2+m], "0") != "" { // a submodule's commit is not read
				oids = append(oids, meta[2+m])
			}
		}
	}
	if len(oids) == 0 {
		return 0, paths, nil
	}
	g := s.git
	g.stdin = strings.NewReader(strings.Join(oids, "\n") + "\n")
	out, err := g.run("cat-file", "--batch-check=%(objectsize)")
	if err != nil {
		return 0, 0, err
	}
	var total uint64
	for _, line := range strings.Split(out, "\n") {
		n, err := strconv.ParseUint(line, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("the size of a file of the branch: %q", line)
		}
		total += n
	}
	return total, paths, nil
}
