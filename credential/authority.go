// Package credential arms a run's credential bindings: a placeholder in
// the jail for each bound variable, the real value and a run certificate
// authority for the network helper, and the CA bundle the jail trusts. The
// real values never reach the jail: only the helper, outside it, puts
// them into requests to the hosts they are bound to.
package credential

// The run's certificate authority: made per run, its key only in memory.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Authority is a run's certificate authority: DER certificate, PKCS #8
// key, and the certificate's SHA-256 for the record.
type Authority struct {
	Cert, Key   []byte
	Fingerprint string // "sha256:HEX"
}

// validity is how long a run CA is good for: a day covers any run an
// agent makes, and a copy taken out of a run is soon worthless.
const validity = 24 * time.Hour

// NewAuthority makes a CA that can sign for hosts only: its name
// constraints permit exactly those DNS names (and, as X.509 has it, names
// below them, for which the helper never signs) and no IP address, so a
// copy of its key could not vouch for any other site.
func NewAuthority(hosts []string, now time.Time) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("run certificate authority: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("run certificate authority: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:                serial,
		Subject:                     pkix.Name{CommonName: "jail run CA (credential injection)", Organization: []string{"jail"}},
		NotBefore:                   now.Add(-time.Minute),
		NotAfter:                    now.Add(validity),
		KeyUsage:                    x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid:       true,
		IsCA:                        true,
		MaxPathLenZero:              true,
		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         hosts,
		ExcludedIPRanges: []*net.IPNet{
			{IP: net.IPv4zero, Mask: net.CIDRMask(0, 32)},
			{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)},
		},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("run certificate authority: %w", err)
	}
	k, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("run certificate authority: %w", err)
	}
	sum := sha256.Sum256(der)
	return &Authority{Cert: der, Key: k, Fingerprint: "sha256:" + hex.EncodeToString(sum[:])}, nil
}

// PEM is the certificate as the jail's bundle holds it.
func (a *Authority) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.Cert})
}
