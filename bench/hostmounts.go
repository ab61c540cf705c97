// A jail's mount list as the sandboxes it is compared with take it: the
// run configuration jail itself builds from a profile (profiles.Config),
// its entries resolved on the host into binds, symlinks and fresh
// filesystems, which bubblewrap's and nsjail's flags can express.
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/mount"
	"github.com/jail-sandbox/jail/profiles"
)

// hostMount is one entry of a jail's mount list as a bind-mounting sandbox
// takes it: a host path to bind (a generated file written to one first), a
// symlink to recreate, or a fresh filesystem.
type hostMount struct {
	Kind   mount.Kind // Bind, ReadOnlyBind, Symlink, Tmpfs, Proc, Dev or Dir
	Src    string     // Bind, ReadOnlyBind: the host path
	Dst    string
	Target string // Symlink
	Size   int64  // Tmpfs: bytes; 0 the kernel's default
	Mode   uint32 // Tmpfs, Dir: permission bits; 0 the default
}

// profileConfig is the run configuration jail makes for `jail -p NAME
// --workspace DIR -- argv` ("" no workspace): the same mounts, environment,
// user and limits, from the same code.
func profileConfig(name, workspace string, argv []string) (jail.Config, error) {
	p, err := profiles.Load(name, profiles.Options{})
	if err != nil {
		return jail.Config{}, err
	}
	if err := p.Apply(profiles.Overrides{Workspace: workspace}); err != nil {
		return jail.Config{}, fmt.Errorf("profile %s: %w", name, err)
	}
	return p.Config(argv, os.Environ())
}

// hostMounts resolves a jail's mounts on the host, whose paths are looked up
// under root ("/" but in tests): a bind whose source is a symlink becomes
// that symlink, as jail recreates it; an optional bind whose source is
// missing is left out; a file's content is written under scratch, to be
// bound read-only in its place.
func hostMounts(specs []mount.Spec, root, scratch string) ([]hostMount, error) {
	var ms []hostMount
	for i, s := range specs {
		switch s.Kind {
		case mount.Bind, mount.ReadOnlyBind:
			host := filepath.Join(root, s.Src)
			fi, err := os.Lstat(host)
			switch {
			case errors.Is(err, fs.ErrNotExist) && s.Optional:
				continue
			case err != nil:
				return nil, fmt.Errorf("mount %s: %w", s.Dst, err)
			case fi.Mode()&fs.ModeSymlink != 0:
				target, err := os.Readlink(host)
				if err != nil {
					return nil, fmt.Errorf("mount %s: %w", s.Dst, err)
				}
				ms = append(ms, hostMount{Kind: mount.Symlink, Dst: s.Dst, Target: target})
			default:
				ms = append(ms, hostMount{Kind: s.Kind, Src: host, Dst: s.Dst})
			}
		case mount.File:
			f := filepath.Join(scratch, fmt.Sprintf("file%d", i))
			mode := fs.FileMode(s.Mode)
			if mode == 0 {
				mode = 0o644
			}
			if err := os.WriteFile(f, s.Content, mode); err != nil {
				return nil, fmt.Errorf("mount %s: %w", s.Dst, err)
			}
			if err := os.Chmod(f, mode); err != nil { // past the umask
				return nil, fmt.Errorf("mount %s: %w", s.Dst, err)
			}
			ms = append(ms, hostMount{Kind: mount.ReadOnlyBind, Src: f, Dst: s.Dst})
		case mount.Tmpfs, mount.Proc, mount.Dev, mount.Dir, mount.Symlink:
			ms = append(ms, hostMount{Kind: s.Kind, Dst: s.Dst, Target: s.Target, Size: s.Size, Mode: s.Mode})
		default:
			return nil, fmt.Errorf("mount %s: kind %v has no equivalent here", s.Dst, s.Kind)
		}
	}
	return ms, nil
}
