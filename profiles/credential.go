package profiles

// Credentials: the [[credential]] tables (a secret bound to the only hosts
// that receive its real value) and --credential ENV@HOST, parsed, checked,
// merged and printed.

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/internal/tomlstrict"
	"github.com/jail-sandbox/jail/secrets"
)

// Credential is one [[credential]] table: the variable the program reads,
// the hosts whose requests get its real value (from the secrets file), and
// the one header it may go in ("" any).
type Credential struct {
	Env    string   `toml:"env"`
	Hosts  []string `toml:"hosts"`
	Header string   `toml:"header"`
}

var credentialKeys = []string{"env", "hosts", "header"}

// errWildcardBinding explains the refusal: one secret for every name
// below a domain is a secret for names nobody reviewed, and the run CA
// would have to sign for all of them.
var errWildcardBinding = errors.New("a wildcard cannot be bound: list each host that may receive the value (the run's certificate authority signs only for names listed)")

// checkCredentialHost wants an exact host name: no wildcard, and no IP
// address (TLS to an address names no host to check the SNI against).
func checkCredentialHost(s string) error {
	if strings.HasPrefix(s, "*") {
		return errWildcardBinding
	}
	if _, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return errors.New("an IP address cannot be bound: bind the host name the program connects to")
	}
	if s != strings.ToLower(s) {
		return errors.New("want the host name in lower case")
	}
	return checkHostName(s)
}

// checkBoundEnv wants a name a secrets file can hold: letters, digits and
// '_', not starting with a digit.
func checkBoundEnv(s string) error {
	if !secrets.IsKey(s) {
		return errors.New("want a variable name (letters, digits and '_', not starting with a digit), as the secrets file holds it")
	}
	return nil
}

// checkHeader wants an HTTP header name: an RFC 9110 token.
func checkHeader(s string) error {
	if s == "" || strings.Trim(s, "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != "" {
		return errors.New("not an HTTP header name")
	}
	return nil
}

func (d *decoder) credentials(key string, v any) {
	seen := map[string]string{} // env → the key of the table that binds it
	d.EachTable(key, v, func(ckey string, t map[string]any) {
		var c Credential
		before := d.Count()
		d.Each(ckey, t, credentialKeys, func(k, kkey string, v any) bool {
			switch k {
			case "env":
				c.Env, _ = d.CheckedStr(kkey, v, checkBoundEnv)
			case "hosts":
				c.Hosts = d.Strings(kkey, v, "hosts", checkCredentialHost)
			case "header":
				c.Header, _ = d.CheckedStr(kkey, v, checkHeader)
			default:
				return false
			}
			return true
		})
		if _, has := t["env"]; !has {
			d.Fail(ckey+".env", "required: the variable the program reads the secret from")
		}
		if _, has := t["hosts"]; !has {
			d.Fail(ckey+".hosts", "required: the hosts that may receive the real value")
		} else if len(c.Hosts) == 0 && d.Count() == before {
			d.Fail(ckey+".hosts", "empty: list the hosts that may receive the real value")
		}
		if prev, dup := seen[c.Env]; dup && c.Env != "" {
			d.Fail(ckey+".env", "%s is already bound by %s", c.Env, prev)
		}
		seen[c.Env] = ckey
		if d.Count() == before {
			d.l.p.Credentials = append(d.l.p.Credentials, c)
		}
	})
}

// checkCredentials validates the bindings held in memory.
func (p *Profile) checkCredentials(add func(key string, err error)) {
	seen := map[string]bool{}
	for i, c := range p.Credentials {
		key := tomlstrict.IndexKey("credential", i+1)
		add(key+".env", checkBoundEnv(c.Env))
		if seen[c.Env] {
			add(key+".env", fmt.Errorf("%s is bound twice", c.Env))
		}
		seen[c.Env] = true
		if len(c.Hosts) == 0 {
			add(key+".hosts", errors.New("required: the hosts that may receive the real value"))
		}
		for j, h := range c.Hosts {
			add(tomlstrict.IndexKey(key+".hosts", j+1), checkCredentialHost(h))
		}
		if c.Header != "" {
			add(key+".header", checkHeader(c.Header))
		}
	}
}

// reachableCredentials checks, once flags are applied, that each bound
// host is one the jail may reach (on some port: TLS is intercepted on
// whichever the list allows): a binding is no way around the allowlist.
func (p *Profile) reachableCredentials() error {
	var errs []error
	for i, c := range p.Credentials {
		key := tomlstrict.IndexKey("credential", i+1)
		if p.Network.Mode != networkAllowlist {
			errs = append(errs, fmt.Errorf("%s: binding %s needs network mode %q (the network is %q): the value goes only through jail's network helper", key, c.Env, networkAllowlist, p.Network.Mode))
			continue
		}
		for _, h := range c.Hosts {
			if !p.Network.allows(h) {
				errs = append(errs, fmt.Errorf("%s: %s is bound to %s, which is not on the allowlist: allow it (--allow %s, or network.allow) or bind another host", key, c.Env, h, h))
			}
		}
	}
	return errors.Join(errs...)
}

// allows reports whether an allow entry lets the jail reach host.
func (n *Network) allows(host string) bool {
	for _, s := range n.Allow {
		a, err := ParseAllow(s)
		if err != nil || a.IP {
			continue
		}
		if a.Host == host || a.Wildcard && strings.HasSuffix(host, "."+a.Host) {
			return true
		}
	}
	return false
}

// mergeCredentials puts a child's bindings over its parent's: one for a
// variable the parent binds replaces it.
func (p *Profile) mergeCredentials(c []Credential) {
	for _, b := range c {
		if i := slices.IndexFunc(p.Credentials, func(x Credential) bool { return x.Env == b.Env }); i >= 0 {
			p.Credentials[i] = b
		} else {
			p.Credentials = append(p.Credentials, b)
		}
	}
}

// cloneCredentials copies the bindings and their host lists.
func cloneCredentials(cs []Credential) []Credential {
	out := slices.Clone(cs)
	for i := range out {
		out[i].Hosts = slices.Clone(cs[i].Hosts)
	}
	return out
}

// encodeCredentials writes the [[credential]] tables. Values live only in
// the secrets file: none is ever printed.
func encodeCredentials(b *strings.Builder, cs []Credential) {
	for _, c := range cs {
		b.WriteString("\n[[credential]]\n")
		fmt.Fprintf(b, "env = %s # value: *** (from the secrets file)\n", tomlstrict.Quote(c.Env))
		fmt.Fprintf(b, "hosts = %s\n", tomlstrict.QuoteList(c.Hosts))
		if c.Header != "" {
			fmt.Fprintf(b, "header = %s\n", tomlstrict.Quote(c.Header))
		}
	}
}

// credential applies --credential ENV@HOST: HOST joins ENV's binding,
// made if the profile has none.
func (a *applier) credential(v string) {
	env, host, ok := strings.Cut(v, "@")
	host = strings.ToLower(host)
	if !ok {
		a.fail("--credential", v, errors.New("want ENV@HOST"))
		return
	}
	if !a.check("--credential", v, errors.Join(checkBoundEnv(env), checkCredentialHost(host))) {
		return
	}
	for i := range a.p.Credentials {
		if c := &a.p.Credentials[i]; c.Env == env {
			if !slices.Contains(c.Hosts, host) {
				c.Hosts = append(c.Hosts, host)
			}
			return
		}
	}
	a.p.Credentials = append(a.p.Credentials, Credential{Env: env, Hosts: []string{host}})
}
