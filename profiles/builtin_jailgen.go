//go:build jailgen

package profiles

// The generator's way in: what builtin_layers.go should hold, for
// jail/internal/builtingen alone.

// GeneratedLayers returns builtin_layers.go before gofmt, for go generate's
// jail/internal/builtingen; built only with -tags jailgen, so no part of
// the package's API.
func GeneratedLayers() (string, error) { return builtinLayersFile() }
