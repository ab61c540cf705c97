package credential

// Arming a run: placeholders into the jail's environment, the real values
// and the CA to the network helper's side of the Config.

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/proxy"
)

// Binding is one variable bound to the only hosts that receive its real
// value; Header, when set, is the only request header it goes in.
type Binding struct {
	Env    string
	Hosts  []string
	Header string
}

// caVars are the variables that name the jail's CA bundle, for the tools
// that read one instead of the distribution's path (Python requests,
// Node, curl, git, Go and OpenSSL).
var caVars = []string{"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"}

// Arm readies cfg for bindings. values are the secrets file's (named
// file, for messages); the real values come only from there, so a bound
// variable is also taken out of what the host's environment passes
// through. upstreamCA is network.upstream_ca's path ("" none). It makes
// the run's CA for the bound hosts, puts a fresh placeholder for each
// binding into the jail's environment, the CA into its trust (bundle and
// variables), and the real values, CA and extra roots into cfg.Network
// for the helper.
func Arm(cfg *jail.Config, bindings []Binding, values map[string]string, file, upstreamCA string, now time.Time) error {
	if len(bindings) == 0 {
		return nil
	}
	if cfg.Network.Mode != "allowlist" {
		return fmt.Errorf("credential %s: bindings need network mode allowlist (the network is %q)", bindings[0].Env, cfg.Network.Mode)
	}
	var hosts []string
	for _, b := range bindings {
		if file == "" {
			return fmt.Errorf("credential %s: no secrets file to read its value from: give --secrets FILE or [secrets] file (never the host's environment)", b.Env)
		}
		v, ok := values[b.Env]
		if !ok {
			return fmt.Errorf("credential %s: the secrets file %s has no %s: add a line %s=VALUE to it", b.Env, file, b.Env, b.Env)
		}
		if v == "" {
			return fmt.Errorf("credential %s: its value in the secrets file %s is empty", b.Env, file)
		}
		ph, err := placeholder()
		if err != nil {
			return err
		}
		cfg.Network.Credentials = append(cfg.Network.Credentials, jail.Credential{
			Env: b.Env, Hosts: slices.Clone(b.Hosts), Header: b.Header, Placeholder: ph, Value: v,
		})
		setEnv(cfg, b.Env, ph)
		for _, h := range b.Hosts {
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	if upstreamCA != "" {
		pemBytes, err := readUpstreamCA(upstreamCA)
		if err != nil {
			return err
		}
		cfg.Network.UpstreamCA = pemBytes
	}
	ca, err := NewAuthority(hosts, now)
	if err != nil {
		return err
	}
	cfg.Network.CACert, cfg.Network.CAKey, cfg.Network.CAFingerprint = ca.Cert, ca.Key, ca.Fingerprint
	specs, path, err := bundleSpecs(cfg.Mounts, ca.PEM())
	if err != nil {
		return fmt.Errorf("credential %s: %w", bindings[0].Env, err)
	}
	cfg.Mounts = append(cfg.Mounts, specs...)
	for _, k := range caVars {
		setEnv(cfg, k, path)
	}
	return nil
}

// placeholder is jail-placeholder- and 128 random bits: a new one per run.
func placeholder() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("placeholder: %w", err)
	}
	return proxy.PlaceholderPrefix + hex.EncodeToString(b[:]), nil
}

// setEnv makes k=v the jail's only value of k: from the profile's env or
// the host's (keep) alike.
func setEnv(cfg *jail.Config, k, v string) {
	cfg.Env = slices.DeleteFunc(cfg.Env, func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
	cfg.KeepEnv = slices.DeleteFunc(cfg.KeepEnv, func(name string) bool { return name == k })
	cfg.Env = append(cfg.Env, k+"="+v)
}

// readUpstreamCA reads network.upstream_ca: PEM with at least one
// certificate, and nothing else.
func readUpstreamCA(path string) ([]byte, error) {
	b, err := readBounded(path, "network.upstream_ca")
	if err != nil {
		return nil, err
	}
	n := 0
	for rest := b; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("network.upstream_ca %s: a %s block: want certificates only", path, blk.Type)
		}
		if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
			return nil, fmt.Errorf("network.upstream_ca %s: certificate %d: %w", path, n+1, err)
		}
		n++
	}
	if n == 0 {
		return nil, errors.New("network.upstream_ca " + path + ": no PEM certificate in it")
	}
	return b, nil
}
