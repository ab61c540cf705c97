// Package hostname says what a host name is to jail: the allowlist's
// entries (profiles) and the names the proxy shows the agent, which it
// suggests as entries, follow one rule.
package hostname

import (
	"errors"
	"fmt"
	"strings"
)

// Check wants a DNS name in lower case: dot-separated labels of letters,
// digits and inner hyphens, 253 bytes at most.
func Check(name string) error {
	if name == "" {
		return errors.New(`want a host name after "*."`)
	}
	if len(name) > 253 {
		return errors.New("a host name is at most 253 characters")
	}
	for _, l := range strings.Split(name, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' ||
			strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return fmt.Errorf("%q is not a host name", name)
		}
	}
	return nil
}
