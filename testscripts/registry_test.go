// The npm registry the host's npm uses, for the one script that installs
// a package through the allowlist (network/smoke_registry.txtar): found at
// test time, never written into a script, and the script skipped when the
// host cannot reach it.
package testscripts

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"
)

// npmRegistry returns the registry URL the caller's npm uses, or why a
// script cannot use it: npm missing, not an http(s) URL, or no HTTP answer
// (any status) to the host within 10 s. It backs the [npmregistry]
// condition.
func npmRegistry() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Without the caller's HOME, as the script's own npm runs (testscript
	// sets HOME=/no-home): the global and built-in configuration.
	cmd := exec.CommandContext(ctx, "npm", "config", "get", "registry")
	cmd.Env = append(os.Environ(), "HOME=/no-home")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("npm config get registry: %w", err)
	}
	reg := strings.TrimSpace(string(out))
	u, err := url.Parse(reg)
	if err != nil || u.Hostname() == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("npm registry %q: not an http(s) URL", reg)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, reg, nil)
	if err != nil {
		return "", fmt.Errorf("npm registry %q: %w", reg, err)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return "", fmt.Errorf("npm registry not reachable from the host: %w", err)
	}
	resp.Body.Close()
	return reg, nil
}
