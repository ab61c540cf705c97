package profiles

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testfiles"
)

// A child's binding of a variable replaces its parent's; others add up;
// printing shows every binding and never a value.
func TestCredentialMergeAndEncode(t *testing.T) {
	dir := testfiles.Write(t, map[string]string{
		"parent.toml": `
[network]
allow = ["api.example.com", "*.other.test"]
upstream_ca = "/etc/test-ca.pem"
[[credential]]
env = "EXAMPLE_API_KEY"
hosts = ["old.example.com"]
[[credential]]
env = "GH_TOKEN"
hosts = ["a.other.test"]
header = "authorization"
`,
		"child.toml": `
extends = "parent.toml"
[[credential]]
env = "EXAMPLE_API_KEY"
hosts = ["api.example.com"]
header = "x-api-key"
`,
	})
	p := mustLoad(t, filepath.Join(dir, "child.toml"), Options{})
	want := []Credential{
		{Env: "EXAMPLE_API_KEY", Hosts: []string{"api.example.com"}, Header: "x-api-key"},
		{Env: "GH_TOKEN", Hosts: []string{"a.other.test"}, Header: "authorization"},
	}
	if len(p.Credentials) != 2 || p.Credentials[0].Env != want[0].Env || p.Credentials[0].Hosts[0] != want[0].Hosts[0] ||
		p.Credentials[0].Header != want[0].Header || p.Credentials[1].Env != want[1].Env {
		t.Fatalf("credentials = %+v, want %+v", p.Credentials, want)
	}
	if p.Network.UpstreamCA != "/etc/test-ca.pem" {
		t.Errorf("upstream_ca = %q", p.Network.UpstreamCA)
	}
	out, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"[[credential]]\nenv = \"EXAMPLE_API_KEY\" # value: *** (from the secrets file)\nhosts = [\"api.example.com\"]\nheader = \"x-api-key\"", `upstream_ca = "/etc/test-ca.pem"`} {
		if !strings.Contains(string(out), s) {
			t.Errorf("encoded profile lacks %q:\n%s", s, out)
		}
	}
	// What Encode prints loads back the same.
	again := testfiles.Write(t, map[string]string{"again.toml": string(out)})
	q := mustLoad(t, filepath.Join(again, "again.toml"), Options{})
	if q.Hash() != p.Hash() {
		t.Errorf("encoded profile loads back differently:\n%s", out)
	}
	// A clone shares no host list.
	c := p.Clone()
	c.Credentials[0].Hosts[0] = "changed.example.com"
	if p.Credentials[0].Hosts[0] != "api.example.com" {
		t.Error("Clone shares the credentials' hosts")
	}
}

// --credential binds through the flags, and a binding is no way around
// the allowlist or the network mode.
func TestCredentialFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Overrides
		want string // "" ok, else part of the error
	}{
		{"bound and allowed", Overrides{Credentials: []string{"EXAMPLE_API_KEY@API.example.com"}, Allow: []string{"api.example.com"}}, ""},
		{"allowed by a wildcard entry", Overrides{Credentials: []string{"K@api.example.com"}, Allow: []string{"*.example.com"}}, ""},
		{"not on the allowlist", Overrides{Credentials: []string{"K@api.example.com"}, Allow: []string{"other.example.com"}},
			"credential[1]: K is bound to api.example.com, which is not on the allowlist: allow it (--allow api.example.com, or network.allow) or bind another host"},
		{"allowed on another port", Overrides{Credentials: []string{"K@api.example.com"}, Allow: []string{"api.example.com:8443"}}, ""},
		{"network none", Overrides{Credentials: []string{"K@api.example.com"}},
			`binding K needs network mode "allowlist" (the network is "none")`},
		{"wildcard", Overrides{Credentials: []string{"K@*.example.com"}, Allow: []string{"*.example.com"}}, "a wildcard cannot be bound"},
		{"no host", Overrides{Credentials: []string{"K"}, Allow: []string{"a.example"}}, `--credential "K": want ENV@HOST`},
		{"bad name", Overrides{Credentials: []string{"K-1@a.example"}, Allow: []string{"a.example"}}, "want a variable name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustLoad(t, "default", Options{})
			err := p.Apply(tc.o)
			if err == nil {
				_, err = p.Config([]string{"true"}, nil)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want it to say %q", err, tc.want)
			}
			if tc.want == "" && (len(p.Credentials) != 1 || p.Credentials[0].Hosts[0] != "api.example.com") {
				t.Errorf("credentials = %+v", p.Credentials)
			}
		})
	}
}
