package profiles

// Decoding [[mount]] tables: each entry's type decides which keys it may
// hold and which it needs.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// mounts decodes the [[mount]] list; a destination mounted twice in one file
// is an error, since only one of the two could win.
func (d *decoder) mounts(key string, v any) {
	tables, ok := d.tables(key, v)
	if !ok {
		return
	}
	first := map[string]string{} // dst → key of the mount that has it
	for i, x := range tables {
		mkey := indexKey(key, i+1)
		t, ok := d.table(mkey, x)
		if !ok {
			continue
		}
		m, ok := d.mount(mkey, t)
		if !ok {
			continue
		}
		if prev, dup := first[m.Dst]; dup {
			d.fail(mkey+".dst", "%q is already mounted by %s", m.Dst, prev)
			continue
		}
		first[m.Dst] = mkey
		d.l.p.Mounts = append(d.l.p.Mounts, m)
	}
}

// mount decodes one [[mount]] table; ok is false when it has any problem.
func (d *decoder) mount(key string, t map[string]any) (m Mount, ok bool) {
	before := len(d.probs)
	typ, known := "", false
	if v, has := t["type"]; !has {
		d.fail(key+".type", "required: one of %s", strings.Join(mountTypeNames, ", "))
	} else if typ, known = v.(string); !known {
		d.fail(key+".type", "want a string, got %s", typeName(v))
	} else if _, known = mountTypes[typ]; !known {
		msg := fmt.Sprintf("unknown type %q: want one of %s", typ, strings.Join(mountTypeNames, ", "))
		if s := suggest(typ, mountTypeNames); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		d.fail(key+".type", "%s", msg)
	}
	m.Type = typ
	allowed := mountTypes[typ].keys
	for _, k := range sortedKeys(t) {
		v, kkey := t[k], joinKey(key, k)
		switch {
		case k == "type":
			continue
		case !slices.Contains(mountKeys, k):
			d.unknown(kkey, k, mountKeys)
			continue
		case k == "src" && typ == workspaceType:
			d.fail(kkey, "not allowed for a workspace: give --workspace DIR instead")
			continue
		case known && k != "dst" && !slices.Contains(allowed, k):
			d.fail(kkey, "only for %s", typesWith(k))
			continue
		}
		d.mountKey(&m, kkey, k, v)
	}
	if known {
		d.mountRequired(&m, key, t)
	}
	return m, known && len(d.probs) == before
}

// mountKey decodes one key of a [[mount]] table already known to belong.
func (d *decoder) mountKey(m *Mount, key, k string, v any) {
	var err error
	switch k {
	case "optional":
		b, ok := v.(bool)
		if !ok {
			d.fail(key, "want a boolean, got %s", typeName(v))
		}
		m.Optional = b
		return
	case "masked":
		b, ok := v.(bool)
		if !ok {
			d.fail(key, "want a boolean, got %s", typeName(v))
		}
		m.Unmasked = !b
		return
	case "size":
		if m.Size, err = parseTmpfsSize(v); err != nil {
			d.failValue(key, v, err)
		}
		return
	case "mode":
		if n, isInt := v.(int64); isInt && n != 0 && !d.l.locator().valueHasPrefix(key, "0o") {
			// 755 in decimal is 0o1363: almost certainly not what was meant.
			if s := strconv.FormatInt(n, 10); len(s) <= 4 && strings.Trim(s, "01234567") == "" {
				d.fail(key, "%d: not octal: write 0o%s or \"%04s\"", n, s, s)
			} else {
				d.fail(key, "%d: not octal: %v", n, errMode)
			}
			return
		}
		if m.Mode, err = parseMode(v); err != nil {
			d.failValue(key, v, err)
		}
		return
	}
	s, ok := d.str(key, v)
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
	d.checkValue(key, s, err)
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
			d.fail(key+".src", "required for %s", m.Type)
		case !hasDst && strings.HasPrefix(m.Src, "~"):
			d.fail(key+".dst", "required when src starts with ~")
		case !hasDst:
			m.Dst = m.Src
		}
		return
	case "symlink":
		if _, has := t["target"]; !has {
			d.fail(key+".target", "required for symlink")
		}
	}
	if !hasDst {
		d.fail(key+".dst", "required for %s", m.Type)
	}
}
