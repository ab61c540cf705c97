// The run's credentials as the helper holds them: the bindings checked,
// the run's certificate authority, the certificate it signs for each
// intercepted host, and the roots the real servers are verified against.

package proxy

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/jail-sandbox/jail/internal/hostname"
)

// PlaceholderPrefix starts every placeholder: what the jail's variables
// hold instead of the secrets; recognisable in a log or a server's error,
// and never a real key's shape. The planner makes them with it.
const PlaceholderPrefix = "jail-placeholder-"

// credentials is the run's bindings, and what intercepting their hosts
// takes.
type credentials struct {
	all   []*Credential
	bound map[string][]*Credential // by host
	ca    *x509.Certificate
	key   crypto.Signer
	// roots verify the real servers of intercepted hosts: the host's
	// system roots and network.upstream_ca. Parsing the system's takes
	// ~15 ms, so it is done once, apart from answering the jail.
	roots func() *x509.CertPool

	mu sync.Mutex
	// servers is each intercepted host's TLS configuration, its
	// certificate made at its first interception and kept for the
	// helper's life (session tickets then resume across connections).
	servers map[string]*tls.Config

	// rec is what the record keeps of the bindings' use, under the
	// proxy's mu.
	rec credRecord
}

// newCredentials checks cfg's bindings and loads the run's certificate
// authority and the roots the real servers are verified against; nil
// when the run binds no credential. Its errors never hold a secret.
func newCredentials(cfg Config) (*credentials, error) {
	if len(cfg.Credentials) == 0 {
		return nil, nil
	}
	c := &credentials{bound: map[string][]*Credential{}, servers: map[string]*tls.Config{}}
	seen := map[string]bool{}
	for i := range cfg.Credentials {
		cr := &cfg.Credentials[i]
		if err := checkCredential(cr); err != nil {
			return nil, fmt.Errorf("credential %d (%s): %w", i+1, recordable(cr.Env, maxName), err)
		}
		if seen[cr.Placeholder] {
			return nil, fmt.Errorf("credential %d (%s): its placeholder is another's", i+1, recordable(cr.Env, maxName))
		}
		seen[cr.Placeholder] = true
		c.all = append(c.all, cr)
		for _, h := range cr.Hosts {
			c.bound[h] = append(c.bound[h], cr)
		}
	}
	ca, err := x509.ParseCertificate(cfg.CACert)
	if err != nil {
		return nil, fmt.Errorf("the run's certificate authority: %w", err)
	}
	if !ca.IsCA {
		return nil, errors.New("the run's certificate authority is not a CA certificate")
	}
	k, err := x509.ParsePKCS8PrivateKey(cfg.CAKey)
	if err != nil {
		return nil, fmt.Errorf("the run's certificate authority's key: %w", err)
	}
	key, ok := k.(crypto.Signer)
	if !ok {
		return nil, errors.New("the run's certificate authority's key cannot sign")
	}
	if pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(ca.PublicKey) {
		return nil, errors.New("the run's certificate authority's key is not its certificate's")
	}
	c.ca, c.key = ca, key
	if len(cfg.UpstreamCA) > 0 && !x509.NewCertPool().AppendCertsFromPEM(cfg.UpstreamCA) {
		return nil, errors.New("upstream_ca: no PEM certificate in it")
	}
	upstream := cfg.UpstreamCA
	c.roots = sync.OnceValue(func() *x509.CertPool {
		roots, err := x509.SystemCertPool()
		if err != nil {
			// Verified against network.upstream_ca alone; with none,
			// every interception answers 502 and says why.
			roots = x509.NewCertPool()
		}
		roots.AppendCertsFromPEM(upstream)
		return roots
	})
	// Read while the jail still looks the name up, not before the
	// helper answers it.
	go c.roots()
	c.rec = newCredRecord(c.all)
	return c, nil
}

// checkCredential wants a placeholder, a value that can go in a header,
// and exact host names.
func checkCredential(cr *Credential) error {
	if cr.Env == "" {
		return errors.New("no variable")
	}
	if !strings.HasPrefix(cr.Placeholder, PlaceholderPrefix) || len(cr.Placeholder) == len(PlaceholderPrefix) {
		return fmt.Errorf("the placeholder does not start %q", PlaceholderPrefix)
	}
	if cr.Value == "" {
		return errors.New("empty value")
	}
	if strings.ContainsFunc(cr.Value, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
		return errors.New("the value holds bytes a header may not (a line break, a control character)")
	}
	if strings.Trim(cr.Header, "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != "" {
		return fmt.Errorf("header %q is not a header name", recordable(cr.Header, maxName))
	}
	if len(cr.Hosts) == 0 {
		return errors.New("no host")
	}
	for _, h := range cr.Hosts {
		_, ipErr := netip.ParseAddr(h)
		if err := hostname.Check(h); err != nil || ipErr == nil {
			return fmt.Errorf("host %q is not a host name in lower case", recordable(h, maxName))
		}
	}
	return nil
}

// boundTo is the bindings of host; nil when c is.
func (c *credentials) boundTo(host string) []*Credential {
	if c == nil {
		return nil
	}
	return c.bound[host]
}

// serverConfig is the TLS configuration that terminates the jail's
// connections to host: a certificate for exactly that name, signed by
// the run's authority, valid within its validity.
func (c *credentials) serverConfig(host string) (*tls.Config, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if conf := c.servers[host]; conf != nil {
		return conf, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("certificate key for %s: %w", host, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("certificate serial for %s: %w", host, err)
	}
	notBefore := time.Now().Add(-time.Minute)
	if notBefore.Before(c.ca.NotBefore) {
		notBefore = c.ca.NotBefore
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: host},
		DNSNames:              []string{host},
		NotBefore:             notBefore,
		NotAfter:              c.ca.NotAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.ca, &key.PublicKey, c.key)
	if err != nil {
		return nil, fmt.Errorf("certificate for %s: %w", host, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("certificate for %s: %w", host, err)
	}
	conf := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}},
		NextProtos:   []string{"h2", "http/1.1"},
		MinVersion:   tls.VersionTLS12,
	}
	c.servers[host] = conf
	return conf, nil
}
