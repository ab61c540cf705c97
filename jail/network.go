// The jail's network, as the network helper (package proxy) gets it.

package jail

import (
	"encoding/json"
	"fmt"

	"github.com/jail-sandbox/jail/proxy"
)

// proxyConfig is the network helper's configuration, for the runner to
// pass it when it starts it: the mode, the list, the pins, and the
// unprivileged ids it becomes when jail runs as root. Mode "none" gets
// one too (the helper is the jail's resolver, refusing every name); ""
// for mode "host", which has no helper.
func proxyConfig(cfg Config, ids hostIDs) (string, error) {
	mode := networkMode(cfg.Network)
	switch mode {
	case "host":
		return "", nil
	case "none", "allowlist":
	default:
		return "", fmt.Errorf("network mode %q", mode)
	}
	pc := proxy.Config{Mode: mode, Hosts: map[string]string{}, UID: ids.uid, GID: ids.gid, Profile: cfg.Profile}
	if mode == "allowlist" {
		for _, a := range cfg.Network.Allow {
			pc.Allow = append(pc.Allow, proxy.Allow{Host: a.Host, Wildcard: a.Wildcard, IP: a.IP, Port: a.Port})
		}
	}
	for _, h := range cfg.Network.Hosts {
		pc.Hosts[h.Name] = h.Addr
	}
	for _, c := range cfg.Network.Credentials {
		pc.Credentials = append(pc.Credentials, proxy.Credential{Env: c.Env, Hosts: c.Hosts, Header: c.Header, Placeholder: c.Placeholder, Value: c.Value})
	}
	pc.CACert, pc.CAKey, pc.UpstreamCA = cfg.Network.CACert, cfg.Network.CAKey, cfg.Network.UpstreamCA
	b, err := json.Marshal(pc)
	return string(b), err
}

// credentialsJSON is the record's part for the bindings, "" without any:
// each binding (never its value or placeholder) and the run CA's
// fingerprint. The helper's report adds what each carried.
func credentialsJSON(n Network) string {
	if len(n.Credentials) == 0 {
		return ""
	}
	bs := make([]CredentialBinding, len(n.Credentials))
	for i, c := range n.Credentials {
		bs[i] = CredentialBinding{Env: c.Env, Hosts: c.Hosts, Header: c.Header}
	}
	b, _ := json.Marshal(bs)
	fp, _ := json.Marshal(n.CAFingerprint)
	return fmt.Sprintf(`"credentials":%s,"credential_ca":%s`, b, fp)
}

// namesAnIP reports whether an entry names an IP address: a program may
// connect to one with no lookup first, so the jail's TUN device must be
// there from the start rather than made on the network's first use.
func namesAnIP(allow []AllowEntry) bool {
	for _, a := range allow {
		if a.IP {
			return true
		}
	}
	return false
}
