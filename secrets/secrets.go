// Package secrets reads a secrets file: the keys a profile or a run puts
// into the command's environment, and nowhere else. The file is TOML
// (KEY = "value") or KEY=value lines; it must be the caller's own, a
// regular file, and readable by no one else.
package secrets

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"golang.org/x/sys/unix"
)

// Read loads path, checking who may read it: the caller alone.
func Read(path string) (map[string]string, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("secrets file %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("secrets file %s: %w", path, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, fmt.Errorf("secrets file %s: not a regular file", path)
	case int(st.Uid) != os.Geteuid():
		return nil, fmt.Errorf("secrets file %s: owned by uid %d, not by the caller (%d)", path, st.Uid, os.Geteuid())
	case st.Mode&0o077 != 0:
		return nil, fmt.Errorf("secrets file %s: mode %04o lets others read or change it; chmod 600 it", path, st.Mode&0o7777)
	}
	if st.Size > 1<<20 {
		return nil, fmt.Errorf("secrets file %s: larger than 1 MiB", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<20+1))
	if err != nil {
		return nil, fmt.Errorf("secrets file %s: %w", path, err)
	}
	if len(data) > 1<<20 {
		return nil, fmt.Errorf("secrets file %s: larger than 1 MiB", path)
	}
	kv, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("secrets file %s: %w", path, err)
	}
	return kv, nil
}

// parse reads TOML (top-level string keys) or KEY=value lines.
func parse(data []byte) (map[string]string, error) {
	kv := map[string]string{}
	var t map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&t); err == nil {
		for k, v := range t {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%s: want a string", k)
			}
			kv[k] = s
		}
	} else {
		// Errors name lines, never their text: it may be a secret.
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), 1<<20+1)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
			k = strings.TrimSpace(k)
			if !ok || !IsKey(k) {
				return nil, fmt.Errorf("line %d: want KEY=value (or TOML)", n)
			}
			kv[k] = strings.Trim(strings.TrimSpace(v), `"'`)
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	for k, v := range kv {
		if !IsKey(k) {
			return nil, errors.New("a key is not a variable name (letters, digits, _)")
		}
		if strings.ContainsRune(v, 0) {
			return nil, fmt.Errorf("%s: the value holds a NUL", k)
		}
	}
	if len(kv) == 0 {
		return nil, errors.New("no secrets in it")
	}
	return kv, nil
}

// IsKey reports whether k can be a key of a secrets file: letters, digits
// and _, not starting with a digit. A credential binding's variable must
// be one (profiles).
func IsKey(k string) bool {
	if k == "" || k[0] >= '0' && k[0] <= '9' {
		return false
	}
	return strings.Trim(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == ""
}

// Keys are the names, sorted.
func Keys(kv map[string]string) []string {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
