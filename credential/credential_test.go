package credential

import (
	"crypto"
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/internal/testcert"
	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/mount"
	"github.com/jail-sandbox/jail/proxy"
)

// sign makes a leaf for names (and addresses) with a's key, as the helper
// would.
func sign(t *testing.T, a *Authority, names ...string) *x509.Certificate {
	t.Helper()
	ca, err := x509.ParseCertificate(a.Cert)
	if err != nil {
		t.Fatal(err)
	}
	k, err := x509.ParsePKCS8PrivateKey(a.Key)
	if err != nil {
		t.Fatal(err)
	}
	return testcert.Leaf(t, ca, k.(crypto.Signer), names...).Leaf
}

// The run CA vouches for the bound hosts only: a copy of its key could
// not impersonate any other site, by name or by address.
func TestAuthorityNameConstraints(t *testing.T) {
	a, err := NewAuthority([]string{"api.example.com"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(a.Cert)
	if !ca.IsCA || !ca.MaxPathLenZero || ca.NotAfter.Sub(ca.NotBefore) > 25*time.Hour {
		t.Errorf("CA: IsCA %v, path len zero %v, valid %v", ca.IsCA, ca.MaxPathLenZero, ca.NotAfter.Sub(ca.NotBefore))
	}
	if !strings.HasPrefix(a.Fingerprint, "sha256:") || len(a.Fingerprint) != 7+64 {
		t.Errorf("fingerprint %q", a.Fingerprint)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	verify := func(leaf *x509.Certificate, name string) error {
		_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name})
		return err
	}
	if err := verify(sign(t, a, "api.example.com"), "api.example.com"); err != nil {
		t.Errorf("a leaf for the bound host does not verify: %v", err)
	}
	if err := verify(sign(t, a, "www.google.com"), "www.google.com"); err == nil {
		t.Error("a leaf for another host verifies")
	}
	if err := verify(sign(t, a, "api.example.com", "192.0.2.1"), "api.example.com"); err == nil {
		t.Error("a leaf with an IP address verifies")
	}
}

// The bundle covers each distribution path the jail shows from a bind,
// with the host's roots and the run CA; with none shown it is made at the
// first path.
func TestBundleSpecs(t *testing.T) {
	dir := t.TempDir()
	certs := filepath.Join(dir, "certs")
	os.Mkdir(certs, 0o755)
	os.WriteFile(filepath.Join(certs, "ca-certificates.crt"), []byte("HOST ROOTS"), 0o644)
	ca := []byte("-----BEGIN CERTIFICATE-----\nRUN\n-----END CERTIFICATE-----\n")

	specs, path, err := bundleSpecs([]mount.Spec{{Kind: mount.ReadOnlyBind, Src: certs, Dst: "/etc/ssl/certs"}}, ca)
	if err != nil {
		t.Fatal(err)
	}
	if path != "/etc/ssl/certs/ca-certificates.crt" || len(specs) != 1 || !specs[0].Over ||
		string(specs[0].Content) != "HOST ROOTS\n"+string(ca) || specs[0].Mode != 0o444 {
		t.Fatalf("specs %+v path %q", specs, path)
	}
	// A tmpfs over the directory hides the bind: nothing to cover.
	specs, _, err = bundleSpecs([]mount.Spec{
		{Kind: mount.ReadOnlyBind, Src: certs, Dst: "/etc/ssl/certs"},
		{Kind: mount.Tmpfs, Dst: "/etc/ssl"},
	}, ca)
	if err != nil || len(specs) != 1 || specs[0].Over || !strings.HasSuffix(string(specs[0].Content), string(ca)) {
		t.Fatalf("under a tmpfs: specs %+v err %v", specs, err)
	}
	// The directory shown without a bundle in it: no place to put it.
	if _, _, err := bundleSpecs([]mount.Spec{{Kind: mount.ReadOnlyBind, Src: dir, Dst: "/etc/ssl/certs"}}, ca); err == nil ||
		!strings.Contains(err.Error(), "without a CA bundle in it") {
		t.Fatalf("bound dir without a bundle: %v", err)
	}
}

// Arm puts placeholders into the jail's environment, takes the bound
// variable out of what the host passes through, and keeps the real value
// on the helper's side only.
func TestArm(t *testing.T) {
	cfg := jail.Config{
		Env:     []string{"EXAMPLE_API_KEY=from-the-profile", "PATH=/usr/bin"},
		KeepEnv: []string{"EXAMPLE_API_KEY", "HOME"},
		Network: jail.Network{Mode: "allowlist"},
	}
	b := []Binding{{Env: "EXAMPLE_API_KEY", Hosts: []string{"api.example.com"}}}
	if err := Arm(&cfg, b, map[string]string{"EXAMPLE_API_KEY": "real-secret"}, "/s", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(cfg.KeepEnv, "EXAMPLE_API_KEY") {
		t.Error("the host's EXAMPLE_API_KEY still passes through")
	}
	var ph string
	for _, kv := range cfg.Env {
		if strings.Contains(kv, "real-secret") {
			t.Fatalf("the real value is in the jail's environment: %q", kv)
		}
		if v, ok := strings.CutPrefix(kv, "EXAMPLE_API_KEY="); ok {
			if ph != "" {
				t.Error("EXAMPLE_API_KEY set twice")
			}
			ph = v
		}
	}
	if !strings.HasPrefix(ph, proxy.PlaceholderPrefix) || len(ph) != len(proxy.PlaceholderPrefix)+32 {
		t.Errorf("placeholder %q", ph)
	}
	c := cfg.Network.Credentials
	if len(c) != 1 || c[0].Value != "real-secret" || c[0].Placeholder != ph || cfg.Network.CAKey == nil {
		t.Errorf("network credentials %+v", c)
	}
	for _, v := range caVars {
		if !slices.Contains(cfg.Env, v+"=/etc/ssl/certs/ca-certificates.crt") {
			t.Errorf("%s does not name the bundle: %v", v, cfg.Env)
		}
	}
	// A second run gets another placeholder.
	cfg2 := jail.Config{Network: jail.Network{Mode: "allowlist"}}
	Arm(&cfg2, b, map[string]string{"EXAMPLE_API_KEY": "real-secret"}, "/s", "", time.Now())
	if cfg2.Network.Credentials[0].Placeholder == ph {
		t.Error("the placeholder is the same in two runs")
	}

	for _, tc := range []struct {
		name   string
		values map[string]string
		file   string
		mode   string
		want   string
	}{
		{"missing from the file", map[string]string{"OTHER": "x"}, "/s", "allowlist", "the secrets file /s has no EXAMPLE_API_KEY: add a line EXAMPLE_API_KEY=VALUE to it"},
		{"no secrets file", nil, "", "allowlist", "no secrets file to read its value from"},
		{"empty value", map[string]string{"EXAMPLE_API_KEY": ""}, "/s", "allowlist", "is empty"},
		{"not the allowlist", map[string]string{"EXAMPLE_API_KEY": "v"}, "/s", "none", "need network mode allowlist"},
	} {
		cfg := jail.Config{Network: jail.Network{Mode: tc.mode}}
		if err := Arm(&cfg, b, tc.values, tc.file, "", time.Now()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
