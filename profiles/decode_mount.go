package profiles

// Decoding [[mount]] tables: each entry's type decides which keys it may
// hold and which it needs.

import (
	"slices"
	"strconv"
	"strings"

	"github.com/jail-sandbox/jail/internal/tomlstrict"
)

// mounts decodes the [[mount]] list; a destination mounted twice in one file
// is an error, since only one of the two could win.
func (d *decoder) mounts(key string, v any) {
	first := map[string]string{} // dst → key of the mount that has it
	d.EachTable(key, v, func(mkey string, t map[string]any) {
		m, ok := d.mount(mkey, t)
		if !ok {
			return
		}
		if prev, dup := first[m.Dst]; dup {
			d.Fail(mkey+".dst", "%q is already mounted by %s", m.Dst, prev)
			return
		}
		first[m.Dst] = mkey
		d.l.p.Mounts = append(d.l.p.Mounts, m)
	})
}

// mount decodes one [[mount]] table; ok is false when it has any problem.
func (d *decoder) mount(key string, t map[string]any) (m Mount, ok bool) {
	before := d.Count()
	typ, known := "", false
	if v, has := t["type"]; !has {
		d.Fail(key+".type", "required: one of %s", strings.Join(mountTypeNames, ", "))
	} else if typ, known = d.Str(key+".type", v); known {
		if _, known = mountTypes[typ]; !known {
			d.Fail(key+".type", "unknown type %q: want one of %s%s", typ, strings.Join(mountTypeNames, ", "), tomlstrict.DidYouMean(typ, mountTypeNames))
		}
	}
	m.Type = typ
	allowed := mountTypes[typ].keys
	d.Each(key, t, mountKeys, func(k, kkey string, v any) bool {
		switch {
		case k == "type":
		case !slices.Contains(mountKeys, k):
			return false
		case k == "src" && typ == workspaceType:
			d.Fail(kkey, "not allowed for a workspace: give --workspace DIR instead")
		case known && k != "dst" && !slices.Contains(allowed, k):
			d.Fail(kkey, "only for %s", typesWith(k))
		default:
			d.mountKey(&m, kkey, k, v)
		}
		return true
	})
	if known {
		d.mountRequired(&m, key, t)
	}
	return m, known && d.Count() == before
}

// mountKey decodes one key of a [[mount]] table already known to belong.
func (d *decoder) mountKey(m *Mount, key, k string, v any) {
	var err error
	switch k {
	case "optional":
		m.Optional, _ = d.Bool(key, v)
		return
	case "masked":
		masked, _ := d.Bool(key, v)
		m.Unmasked = !masked
		return
	case "size":
		m.Size, err = parseTmpfsSize(v)
		d.CheckValue(key, v, err)
		return
	case "mode":
		if n, isInt := v.(int64); isInt && n != 0 && !d.ValueHasPrefix(key, "0o") {
			// 755 in decimal is 0o1363: almost certainly not what was meant.
			if s := strconv.FormatInt(n, 10); len(s) <= 4 && strings.Trim(s, "01234567") == "" {
				d.Fail(key, "%d: not octal: write 0o%s or \"%04s\"", n, s, s)
			} else {
				d.Fail(key, "%d: not octal: %v", n, errMode)
			}
			return
		}
		m.Mode, err = parseMode(v)
		d.CheckValue(key, v, err)
		return
	}
	s, ok := d.Str(key, v)
	if !ok {
		return
	}
	switch k {
	case "src":
		m.Src, err = s, checkSrc(s)
	case "dst":
		m.Dst, err = s, checkJailPath(s, false)
	case "target":
		m.Target, err = s, checkTarget(s)
	case "content":
		m.Content = s
	}
	d.CheckValue(key, s, err)
}

// mountRequired reports keys a mount's type needs but the table lacks, and
// fills the defaults: a bind's dst is its src.
func (d *decoder) mountRequired(m *Mount, key string, t map[string]any) {
	_, hasSrc := t["src"]
	_, hasDst := t["dst"]
	switch m.Type {
	case "bind", "ro-bind":
		switch {
		case !hasSrc:
			d.Fail(key+".src", "required for %s", m.Type)
		case !hasDst && strings.HasPrefix(m.Src, "~"):
			d.Fail(key+".dst", "required when src starts with ~")
		case !hasDst:
			m.Dst = m.Src
		}
		return
	case "symlink":
		if _, has := t["target"]; !has {
			d.Fail(key+".target", "required for symlink")
		}
	}
	if !hasDst {
		d.Fail(key+".dst", "required for %s", m.Type)
	}
}
