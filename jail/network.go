package jail

import (
	"encoding/json"

	"jail/proxy"
)

// proxyConfig is the allowlist proxy's configuration, for the runner to
// pass it when it starts it: the list, the pins, and the unprivileged ids
// it becomes when jail runs as root. "" for the other modes.
func proxyConfig(cfg Config, ids hostIDs) (string, error) {
	if cfg.Network.Mode != "allowlist" {
		return "", nil
	}
	pc := proxy.Config{Hosts: map[string]string{}, UID: ids.uid, GID: ids.gid, Profile: cfg.Profile}
	for _, a := range cfg.Network.Allow {
		pc.Allow = append(pc.Allow, proxy.Allow{Host: a.Host, Wildcard: a.Wildcard, IP: a.IP, Port: a.Port})
	}
	for _, h := range cfg.Network.Hosts {
		pc.Hosts[h.Name] = h.Addr
	}
	b, err := json.Marshal(pc)
	return string(b), err
}
