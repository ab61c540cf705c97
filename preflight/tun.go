// The TUN device check: what the allowlist network needs of the host.
package preflight

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// tunDevice reports whether this caller can open /dev/net/tun, which
// network = "allowlist" needs (jail/tun.c opens it in the jail's network
// namespace, with the caller's host ids). Optional: the other network
// modes run without it, and an allowlist run without it fails with the
// same fix.
func tunDevice() Result {
	r := Result{Name: "TUN device (network = \"allowlist\")", Optional: true}
	f, err := os.OpenFile("/dev/net/tun", os.O_RDWR, 0)
	switch {
	case err == nil:
		f.Close()
		r.OK = true
		r.Detail = "/dev/net/tun opens"
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, unix.ENODEV), errors.Is(err, unix.ENXIO):
		r.Detail = "/dev/net/tun is missing"
		r.Fixes = []string{"load the tun module (modprobe tun); in a container, pass --device /dev/net/tun"}
	case errors.Is(err, fs.ErrPermission):
		r.Detail = "/dev/net/tun is not open to this user"
		r.Fixes = []string{"make it mode 0666, as udev does on Debian and Ubuntu (chmod 0666 /dev/net/tun), or run jail as root"}
	default:
		r.Detail = "/dev/net/tun: " + err.Error()
	}
	return r
}
