// Package seccomp owns the jail's seccomp filter: its policy model
// (policy.go, groups.go, the OCI importer oci.go; the TOML policy language
// is policyfile/), compiled to BPF in the parent with libseccomp (linked
// statically, compile.go, cached by cache.go), loaded by the command's
// process as the last step before exec (load.c), and the runner's answers
// to what a notify rule hands it (notify.c). This file asks what the kernel
// and the linked libseccomp support.
package seccomp

import (
	"fmt"

	libseccomp "github.com/seccomp/libseccomp-golang"
)

// Support is what seccomp filtering this host offers.
type Support struct {
	// API is libseccomp's API level for this kernel: 3 or more means
	// SECCOMP_RET_LOG and the TSYNC flag; 5 or more, user notification
	// (SECCOMP_RET_USER_NOTIF), which the denial reports need.
	API uint
	// Library is the libseccomp version linked into jail.
	Library string
}

// Probe reports the host's seccomp support; an error means there is none.
func Probe() (Support, error) {
	major, minor, micro := libseccomp.GetLibraryVersion()
	s := Support{Library: fmt.Sprintf("%d.%d.%d", major, minor, micro)}
	api, err := libseccomp.GetAPI()
	if err != nil {
		return s, fmt.Errorf("libseccomp %s: %w", s.Library, err)
	}
	s.API = api
	if api < 1 {
		return s, fmt.Errorf("kernel has no seccomp filter support (libseccomp API level %d)", api)
	}
	return s, nil
}
