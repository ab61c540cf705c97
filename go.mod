module github.com/jail-sandbox/jail

go 1.26.3

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/containerd/cgroups/v3 v3.1.3
	github.com/moby/sys/mountinfo v0.7.3
	github.com/moby/sys/userns v0.1.0
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/rogpeppe/go-internal v1.16.0
	github.com/seccomp/libseccomp-golang v0.11.1
	github.com/urfave/cli/v2 v2.27.7
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.49.0
	gvisor.dev/gvisor v0.0.0-20260905035102-160fafc42237
)

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/google/btree v1.1.2 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
	golang.org/x/exp v0.0.0-20250711185948-6ae5c78190dc // indirect
	golang.org/x/time v0.15.0 // indirect
	golang.org/x/tools v0.43.0 // indirect
)
