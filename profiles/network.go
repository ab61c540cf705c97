package profiles

// Network: the [network] table (mode, allow, hosts), parsed, checked,
// merged, printed and converted.

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/jail-sandbox/jail/internal/hostname"
	"github.com/jail-sandbox/jail/internal/tomlstrict"
	"github.com/jail-sandbox/jail/jail"
)

// Network modes.
const (
	networkNone      = "none"
	networkAllowlist = "allowlist"
	networkHost      = "host"
)

// checkNetworkMode wants one of the three modes.
func checkNetworkMode(s string) error {
	switch s {
	case networkNone, networkAllowlist, networkHost:
		return nil
	}
	return fmt.Errorf("unknown mode: want %q, %q or %q", networkNone, networkAllowlist, networkHost)
}

// ParseAllow reads an allow entry: a host name, "*." and a name (any
// name below it), or an IP address ([v6] with a port), each with an
// optional ":port".
func ParseAllow(s string) (jail.AllowEntry, error) {
	var a jail.AllowEntry
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/?#@ \t\n") {
		return a, errors.New(`want HOST, *.DOMAIN or an IP, with an optional :PORT (no scheme, path or user)`)
	}
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 {
			return a, errors.New("an IPv6 address wants its closing ]")
		}
		host, port = s[1:end], strings.TrimPrefix(s[end+1:], ":")
		if s[end+1:] != "" && !strings.HasPrefix(s[end+1:], ":") {
			return a, errors.New("want [IPv6]:PORT")
		}
	} else if i := strings.LastIndex(s, ":"); i >= 0 {
		if strings.Count(s, ":") > 1 {
			return a, errors.New("an IPv6 address goes in brackets: [::1]:443")
		}
		host, port = s[:i], s[i+1:]
		if port == "" {
			return a, errors.New("a ':' wants a port after it")
		}
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return a, fmt.Errorf("port %q: want 1 to 65535", port)
		}
		a.Port = uint16(n)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		a.Host = ip.Unmap().String()
		a.IP = true
		return a, nil
	}
	name := strings.ToLower(host)
	if rest, ok := strings.CutPrefix(name, "*."); ok {
		a.Wildcard = true
		name = rest
	}
	if err := checkHostName(name); err != nil {
		return a, err
	}
	a.Host = name
	return a, nil
}

// checkHostName wants a DNS name (hostname.Check: the proxy's suggestions
// follow the same rule).
func checkHostName(name string) error { return hostname.Check(name) }

// checkPin wants a host name pinned to an IP address.
func checkPin(name, addr string) error {
	if err := checkHostName(strings.ToLower(name)); err != nil {
		return err
	}
	if _, err := netip.ParseAddr(addr); err != nil {
		return fmt.Errorf("%q is not an IP address", addr)
	}
	return nil
}

func (d *decoder) network(t map[string]any) {
	n := &d.l.p.Network
	d.Each("network", t, networkKeys, func(k, key string, v any) bool {
		switch k {
		case "mode":
			n.Mode, d.l.set[key] = d.CheckedStr(key, v, checkNetworkMode)
		case "allow":
			n.Allow = append(n.Allow, d.Strings(key, v, "hosts", checkAllow)...)
		case "upstream_ca":
			n.UpstreamCA, d.l.set[key] = d.CheckedStr(key, v, checkHostFile)
		case "hosts":
			hosts, _ := d.Table(key, v)
			for _, name := range tomlstrict.SortedKeys(hosts) {
				hkey := tomlstrict.JoinKey(key, name)
				if s, ok := d.CheckedStr(hkey, hosts[name], func(s string) error { return checkPin(name, s) }); ok {
					if n.Hosts == nil {
						n.Hosts = map[string]string{}
					}
					n.Hosts[strings.ToLower(name)] = s
				}
			}
		default:
			return false
		}
		return true
	})
	// allow and hosts mean the allowlist: a layer that lists them and
	// says no mode gets it; one that says another mode is wrong.
	if len(n.Allow) > 0 || len(n.Hosts) > 0 {
		if !d.l.set["network.mode"] {
			n.Mode, d.l.set["network.mode"] = networkAllowlist, true
		} else if n.Mode != networkAllowlist {
			d.Fail("network.mode", "%q: allow and hosts need mode = %q", n.Mode, networkAllowlist)
		}
	}
}

// checkAllow checks an allow entry, as ParseAllow reads it.
func checkAllow(s string) error {
	_, err := ParseAllow(s)
	return err
}

// check validates the network held in memory: the mode, each entry, and
// that allow and hosts come only with the allowlist mode.
func (n *Network) check(add func(key string, err error)) {
	add("network.mode", checkNetworkMode(n.Mode))
	for i, s := range n.Allow {
		_, err := ParseAllow(s)
		add(tomlstrict.IndexKey("network.allow", i+1), err)
	}
	for _, name := range slices.Sorted(maps.Keys(n.Hosts)) {
		add(tomlstrict.JoinKey("network.hosts", name), checkPin(name, n.Hosts[name]))
	}
	add("network.upstream_ca", checkHostFile(n.UpstreamCA))
	if n.Mode != networkAllowlist && (len(n.Allow) > 0 || len(n.Hosts) > 0) {
		add("network.mode", fmt.Errorf("%q: allow and hosts need mode = %q", n.Mode, networkAllowlist))
	}
}

// merge adds a child's network over its parent's: the mode when the child
// sets it, its allow entries after the parent's, its pins over the
// parent's.
func (n *Network) merge(c *Network, set map[string]bool) {
	if set["network.mode"] {
		n.Mode = c.Mode
	}
	if set["network.upstream_ca"] {
		n.UpstreamCA = c.UpstreamCA
	}
	for _, a := range c.Allow {
		if !slices.Contains(n.Allow, a) {
			n.Allow = append(n.Allow, a)
		}
	}
	for k, v := range c.Hosts {
		if n.Hosts == nil {
			n.Hosts = map[string]string{}
		}
		n.Hosts[k] = v
	}
}

// clone copies the network's lists.
func (n Network) clone() Network {
	c := n
	c.Allow = slices.Clone(n.Allow)
	if n.Hosts != nil {
		c.Hosts = maps.Clone(n.Hosts)
	}
	return c
}

// encode writes the [network] table; host mode says loudly what it means.
func (n *Network) encode(b *strings.Builder) {
	b.WriteString("\n[network]\n")
	if n.Mode == networkHost {
		b.WriteString("# HOST NETWORK: the jail shares the host's network namespace; it reaches whatever the host reaches\n")
	}
	fmt.Fprintf(b, "mode = %s\n", tomlstrict.Quote(n.Mode))
	if len(n.Allow) > 0 {
		fmt.Fprintf(b, "allow = %s\n", tomlstrict.QuoteList(n.Allow))
	}
	if n.UpstreamCA != "" {
		fmt.Fprintf(b, "upstream_ca = %s\n", tomlstrict.Quote(n.UpstreamCA))
	}
	if len(n.Hosts) > 0 {
		b.WriteString("\n[network.hosts]\n")
		for _, k := range slices.Sorted(maps.Keys(n.Hosts)) {
			fmt.Fprintf(b, "%s = %s\n", tomlstrict.Quote(k), tomlstrict.Quote(n.Hosts[k]))
		}
	}
}

// config converts the network for a run.
func (n *Network) config() jail.Network {
	c := jail.Network{Mode: n.Mode}
	for _, s := range n.Allow {
		a, _ := ParseAllow(s) // checked
		c.Allow = append(c.Allow, a)
	}
	for _, k := range slices.Sorted(maps.Keys(n.Hosts)) {
		c.Hosts = append(c.Hosts, jail.Pin{Name: k, Addr: n.Hosts[k]})
	}
	return c
}

// checkHostFile wants an absolute host path, or nothing: the audit log,
// a secrets file.
func checkHostFile(s string) error {
	if s != "" && (!strings.HasPrefix(s, "/") || strings.ContainsAny(s, "\n\x00")) {
		return errors.New("want an absolute path")
	}
	return nil
}
