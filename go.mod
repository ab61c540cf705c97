module jail

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	golang.org/x/sys v0.49.0
)
