// The plan cache check: which directory this caller's cache is in, or why
// it has none (plancache/dir.c decides; this only says it).
package preflight

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/plancache"
)

// planCache reports where this caller's runs are cached. Optional: without
// a cache every run is planned anew, which costs only time.
func planCache(p plancache.Place, euid int) Result {
	r := Result{Name: "plan cache", Optional: true}
	if p.At == plancache.None {
		var whys []string
		for at := plancache.AtRun; at <= plancache.AtState; at++ {
			if w := placeWhy(p, at, euid); w != "" {
				whys = append(whys, w)
			}
		}
		r.Detail = "off, every run is planned anew: " + strings.Join(whys, "; ")
		r.Fixes = cacheFixes(p, euid)
		return r
	}
	dir := p.Dirs[p.At]
	plans := filepath.Join(dir, "plans")
	switch {
	case p.StateWhy != 0 && !isENOENT(p.StateWhy):
		r.Detail = "off, every run is planned anew: " + levelWhy(dir, p.StateWhy)
		r.Fixes = []string{levelFix(dir, p.StateWhy)}
		return r
	case p.StateWhy == 0 && p.PlansWhy != 0 && !isENOENT(p.PlansWhy):
		r.Detail = "off, every run is planned anew: " + levelWhy(plans, p.PlansWhy)
		r.Fixes = []string{levelFix(plans, p.PlansWhy)}
		return r
	}
	r.OK = true
	r.Detail = plans
	if p.StateWhy != 0 || p.PlansWhy != 0 {
		r.Detail += " (the first run makes it)"
	}
	switch p.At {
	case plancache.AtXDG:
		r.Detail += ", in $XDG_RUNTIME_DIR: " + placeWhy(p, plancache.AtRun, euid)
	case plancache.AtState:
		r.Detail += ", in the state directory: " + placeWhy(p, plancache.AtRun, euid) + "; " +
			placeWhy(p, plancache.AtXDG, euid) + "; and there is no /run/user (a container)"
	}
	return r
}

func isENOENT(w plancache.Why) bool { return w.Errno() == syscall.ENOENT }

// placeWhy says why place at was passed over ("" where it was not tried,
// or is not one for this caller).
func placeWhy(p plancache.Place, at plancache.At, euid int) string {
	w := p.Why[at]
	switch {
	case at == plancache.AtRun:
		return levelWhy(filepath.Dir(p.Dirs[at]), w)
	case euid == 0:
		return ""
	case at == plancache.AtXDG:
		switch w {
		case plancache.Unset:
			return "$XDG_RUNTIME_DIR is unset"
		case plancache.Relative:
			return "$XDG_RUNTIME_DIR is not an absolute path"
		case plancache.Same:
			return ""
		case plancache.ParentOpen:
			return "$XDG_RUNTIME_DIR " + filepath.Dir(p.Dirs[at]) + " is in a directory others than root may write, so the caller or a jail of its could have made it"
		}
		return "$XDG_RUNTIME_DIR " + levelWhy(filepath.Dir(p.Dirs[at]), w)
	}
	switch w {
	case plancache.Unset:
		return "no state directory: HOME is not an absolute path and JAIL_STATE_DIR is unset"
	case plancache.NotHere:
		return "the state directory is not used where /run/user exists (a login manager's host, which makes /run/user/UID at login)"
	}
	return "the state directory " + levelWhy(filepath.Dir(p.Dirs[at]), w)
}

// levelWhy says why directory dir is not used.
func levelWhy(dir string, w plancache.Why) string {
	switch {
	case w == plancache.NotPrivate:
		return dir + " is not the caller's alone (its owner, or a mode that lets others in)"
	case w.Errno() == syscall.ENOENT:
		return dir + " is missing"
	case w.Errno() == syscall.ELOOP:
		return dir + " is reached through a symlink"
	case w > 0:
		return fmt.Sprintf("%s: %v", dir, w.Errno())
	}
	return dir + " is not used"
}

// levelFix is the fix for a directory of the cache's that is not the
// caller's alone, or cannot be opened.
func levelFix(dir string, w plancache.Why) string {
	if w == plancache.NotPrivate {
		return "make it yours, mode 0700 (chmod 700 " + dir + "), or remove it: the next run makes it so"
	}
	if errors.Is(w.Errno(), syscall.ELOOP) {
		return "replace the symlink with the directory itself"
	}
	return "make it a directory of yours, mode 0700"
}

// cacheFixes are the ways to give a caller without a cache one.
func cacheFixes(p plancache.Place, euid int) []string {
	if euid == 0 {
		return []string{"make /run a directory root may write (a tmpfs, as the host has it)"}
	}
	rt := filepath.Dir(p.Dirs[plancache.AtRun])
	fixes := []string{fmt.Sprintf("set XDG_RUNTIME_DIR to a directory of yours, mode 0700 (mkdir -m 700 DIR); "+
		"in a container, docker run --tmpfs %s:uid=%d,mode=0700 makes %s itself", rt, euid, rt)}
	if p.UserDirs {
		fixes = append(fixes, "or log in through the login manager (it makes "+rt+"), or have root make "+rt+" yours, mode 0700")
	} else {
		fixes = append(fixes, "or set JAIL_STATE_DIR (or HOME) so the state directory is a directory of yours that no one else may write")
	}
	return fixes
}
