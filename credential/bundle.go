package credential

// The CA bundle the jail trusts: the system's roots, as the jail would
// have seen them, plus the run's CA, put where the distribution keeps its
// bundle, so that programs that read no variable trust it too.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jail-sandbox/jail/mount"
)

// bundlePaths are where distributions keep the system's CA bundle (the
// list Go's crypto/x509 searches): Debian, Ubuntu, Alpine and Arch;
// Fedora and RHEL (two names); openSUSE; and the BSD-style name some keep
// as well.
var bundlePaths = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// maxBundle bounds a host bundle read into the plan (Debian's is 220 KB).
const maxBundle = 4 << 20

// bundleSpecs returns the mounts that put the bundle (the host's roots
// and caPEM) in the jail, and the jail path the variables name. Each
// distribution bundle the jail shows as a regular file is covered by one
// read-only file with the same roots plus the run CA (a symbolic link
// there leads to one of them). When the jail shows none, the bundle is
// made at the first path, with the first the host has.
func bundleSpecs(mounts []mount.Spec, caPEM []byte) ([]mount.Spec, string, error) {
	var specs []mount.Spec
	for _, dst := range bundlePaths {
		src, ok := shownFrom(mounts, dst)
		if !ok {
			continue
		}
		// A regular file, reached through no symbolic link: the cover is
		// made without following one (a link leads to another path here).
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if real, err := filepath.EvalSymlinks(src); err != nil || real != filepath.Clean(src) {
			continue
		}
		roots, err := readBundle(src)
		if err != nil {
			return nil, "", err
		}
		specs = append(specs, mount.Spec{Kind: mount.File, Over: true, Dst: dst, Mode: 0o444, Content: withCA(roots, caPEM)})
	}
	if len(specs) > 0 {
		return specs, specs[0].Dst, nil
	}
	dst := bundlePaths[0]
	if _, under := shownFrom(mounts, filepath.Dir(dst)); under {
		return nil, "", fmt.Errorf("the jail shows %s from the host without a CA bundle in it, so the run CA has nowhere to go: bind the host's bundle, or another directory there", filepath.Dir(dst))
	}
	var roots []byte
	for _, p := range bundlePaths {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			var err error
			if roots, err = readBundle(p); err != nil {
				return nil, "", err
			}
			break
		}
	}
	return []mount.Spec{{Kind: mount.File, Dst: dst, Mode: 0o444, Content: withCA(roots, caPEM)}}, dst, nil
}

// shownFrom returns the host path the jail shows at dst through a bind
// (the last one covering it wins, as in the mount order), or false.
func shownFrom(mounts []mount.Spec, dst string) (string, bool) {
	src, found := "", false
	for _, m := range mounts {
		if m.Kind != mount.Bind && m.Kind != mount.ReadOnlyBind {
			if m.Dst == dst || strings.HasPrefix(dst, strings.TrimSuffix(m.Dst, "/")+"/") {
				src, found = "", false // covered by something else
			}
			continue
		}
		switch {
		case m.Dst == dst:
			src, found = m.Src, true
		case strings.HasPrefix(dst, strings.TrimSuffix(m.Dst, "/")+"/"):
			src, found = filepath.Join(m.Src, strings.TrimPrefix(dst, strings.TrimSuffix(m.Dst, "/")+"/")), true
		}
	}
	return src, found
}

// readBundle reads a host bundle.
func readBundle(path string) ([]byte, error) { return readBounded(path, "the system's CA bundle") }

// readBounded reads a PEM file of the host's into the plan, at most
// maxBundle; what names it in errors.
func readBounded(path, what string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(b) > maxBundle {
		return nil, fmt.Errorf("%s %s: larger than %d MiB", what, path, maxBundle>>20)
	}
	return b, nil
}

// withCA is roots then the run CA, on a line of its own.
func withCA(roots, caPEM []byte) []byte {
	out := make([]byte, 0, len(roots)+len(caPEM)+1)
	out = append(out, roots...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, caPEM...)
}
