// The AppArmor step: where AppArmor restricts unprivileged user namespaces
// (kernel.apparmor_restrict_unprivileged_userns = 1, Ubuntu 23.10 and
// later), an unprivileged caller's jail cannot make the user namespace it
// is built in unless a profile for the binary allows it. The step writes
// that profile, for the binary's real path, and loads it; it stays across
// reboots, as /etc/apparmor.d is loaded at boot.
package setup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// profileName is the AppArmor profile's name and its file's in
// /etc/apparmor.d.
const profileName = "jail"

// RestrictsUserns reports whether AppArmor restricts unprivileged user
// namespaces, by kernel.apparmor_restrict_unprivileged_userns under the
// /proc/sys tree procSys; absent is false.
func RestrictsUserns(procSys string) bool {
	b, err := os.ReadFile(filepath.Join(procSys, "kernel/apparmor_restrict_unprivileged_userns"))
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && n == 1
}

// AppArmorProfile is the AppArmor profile for the jail binary at bin, as
// `jail setup` writes it and the package ships it for /usr/bin/jail
// (release/, by internal/gendocs): one text, so that setup finds the
// package's profile already set rather than rewriting a conffile.
func AppArmorProfile(bin string) (string, error) {
	if err := attachable(bin); err != nil {
		return "", err
	}
	return profile(bin), nil
}

// profile is the AppArmor profile for the jail binary at bin: unconfined
// but for user namespaces, which it allows, as Ubuntu's own profiles do for
// the programs that need them. What runs in a jail is confined by jail
// itself (namespaces, its seccomp filter, cgroups); bin must be attachable.
func profile(bin string) string {
	return `# Lets the jail binary make the user namespace each jail is built in, where
# kernel.apparmor_restrict_unprivileged_userns is 1; jail confines what runs
# inside with its own namespaces and seccomp filter. Written by the jail
# package or ` + "`jail setup`" + `, which replace it: put local additions in
# local/` + profileName + `.
abi <abi/4.0>,

profile ` + profileName + ` "` + bin + `" flags=(unconfined) {
  userns,

  include if exists <local/` + profileName + `>
}
`
}

// attachable refuses a path AppArmor would not take literally: a quote
// or a newline ends the quoted path, and glob characters match others.
func attachable(bin string) error {
	if !filepath.IsAbs(bin) {
		return fmt.Errorf("the jail binary's path %q is not absolute", bin)
	}
	if i := strings.IndexFunc(bin, func(r rune) bool { return r < ' ' || strings.ContainsRune(`"*?[]{}^\`, r) }); i >= 0 {
		return fmt.Errorf("the jail binary's path %q holds %q, which an AppArmor profile cannot name literally: move it to a plain path", bin, bin[i])
	}
	return nil
}

func appArmor(h Host) (Change, error) {
	sysctl := filepath.Join(h.ProcSys, "kernel/apparmor_restrict_unprivileged_userns")
	if _, err := os.Stat(sysctl); err != nil {
		return Change{None: "does not apply: no AppArmor restriction on user namespaces here (kernel.apparmor_restrict_unprivileged_userns is absent)"}, nil
	}
	if !RestrictsUserns(h.ProcSys) {
		return Change{None: "does not apply: kernel.apparmor_restrict_unprivileged_userns is not 1"}, nil
	}
	if _, err := os.Stat(filepath.Join(h.SecurityFS, "apparmor")); err != nil {
		return Change{None: "does not apply: AppArmor is not enabled (no " + filepath.Join(h.SecurityFS, "apparmor") + ")"}, nil
	}
	text, err := AppArmorProfile(h.Binary)
	if err != nil {
		return Change{}, err
	}
	file := filepath.Join(h.AppArmorDir, profileName)
	want := []byte(text)
	have, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Change{}, err
	}
	written := bytes.Equal(have, want)
	loaded, err := profileLoaded(h.SecurityFS)
	if err != nil {
		return Change{}, err
	}
	what := file + " (user namespaces for " + h.Binary + ")"
	if written && loaded {
		return Change{None: "already set: " + what + ", loaded"}, nil
	}
	would := "write " + what + " and load it: apparmor_parser -r " + file
	if written {
		would = "load " + what + ": apparmor_parser -r " + file
	}
	return Change{
		Would: would,
		Apply: func() (string, error) {
			if !written {
				if err := writeFile(file, want); err != nil {
					return "", err
				}
			}
			if err := h.LoadProfile(file); err != nil {
				return "", err
			}
			did := "wrote and loaded "
			if written {
				did = "loaded "
			}
			return did + what + "; AppArmor loads it again at boot", nil
		},
	}, nil
}

// profileLoaded reports whether the kernel has a profile named jail, by
// AppArmor's list of loaded profiles ("NAME (MODE)" lines).
func profileLoaded(securityFS string) (bool, error) {
	f, err := os.Open(filepath.Join(securityFS, "apparmor/profiles"))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return false, nil // then load it: a reload of the same profile changes nothing
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), profileName+" (") {
			return true, nil
		}
	}
	return false, sc.Err()
}

// writeFile replaces file with data, whole or not at all (a half-written
// profile would fail to load at boot).
func writeFile(file string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after a rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
