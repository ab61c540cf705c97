# jail: build, test, demo, bench, lint. Works as root on a fresh Debian or
# Ubuntu with Go and gcc: what else is needed is installed here.

GO      ?= go
BIN     := bin/jail
# What `jail version` says: git's description and the commit; outside a
# checkout, what Go stamps (cmd_version.go).
VERSION := $(shell git describe --always --dirty 2>/dev/null)
COMMIT  := $(shell git rev-parse HEAD 2>/dev/null)
# netgo/osusergo: no glibc NSS in a static binary; urfave_cli_no_docs: no
# man-page generator linked in.
TAGS    := netgo osusergo urfave_cli_no_docs
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -extldflags "-static"
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# staticcheck 2026.2.2, by its module version: the module proxy does not
# resolve the release name.
STATICCHECK_VERSION := v0.8.2
# A count, not a duration: a -fuzztime duration races Go's fuzz coordinator
# at its deadline (golang/go#75804, fixed in Go 1.27) and fails a target
# that found nothing, most often while it minimizes a new input; 200000
# runs are 10-25 s a target on 2 cores. Minimizing is bounded too.
FUZZTIME ?= 200000x
FUZZMINIMIZE ?= 5s

export CGO_ENABLED := 1

.PHONY: release test-release test-container test-clients test-cgroup2 bench-vm all build test testdeps fuzz soak demo bench lint deps clean generate

all: build

# libseccomp-dev holds the static libseccomp.a that gets linked in;
# pkg-config is how libseccomp-golang finds it.
deps:
	@if ! [ -f /usr/include/seccomp.h ] || ! command -v pkg-config >/dev/null; then \
		echo "installing libseccomp-dev and pkg-config"; \
		$(SUDO) apt-get install -y -qq libseccomp-dev pkg-config >/dev/null 2>&1 || \
		{ $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq libseccomp-dev pkg-config; }; \
	fi

build: deps
	$(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN) .
	@ldd $(BIN) 2>&1 | grep -q 'not a dynamic executable' || { echo "$(BIN) is not static"; exit 1; }
	@ln -sf jail $(dir $(BIN))jail-sh

# The suite: unit tests, then the testscripts, which run the real binary
# in real jails, as root and as an unprivileged user they create, then a
# short bounded fuzz of the profile parser and the runner's C decoder.
test: build testdeps
	JAIL_BIN=$(CURDIR)/$(BIN) JAIL_APPARMOR_PARSER=$(APPARMOR_PARSER) $(GO) test -count=1 -tags '$(TAGS)' ./...
	$(MAKE) --no-print-directory test-cgroup2
	$(MAKE) --no-print-directory test-container
	$(MAKE) --no-print-directory test-clients
	$(MAKE) --no-print-directory test-release
	$(MAKE) --no-print-directory fuzz

# jail in real Docker containers (containertest/run.sh): the README's
# recipes ("In a container") as root and as uid 1000, the isolation checked
# from inside the jail, and every container setting that cannot run jails
# checked to fail with its cause, in a run and in jail check. The image is
# built from scratch out of this host's files (no registry). Installs
# docker.io when missing; uses a running dockerd, or starts a private one
# (no bridge, no iptables, no IP forwarding) and stops it again. Not part
# of test.
# The Python and TypeScript clients' suites, against the real binary: each
# client's test.sh (clients/*/test.sh) runs its own, with JAIL_BIN set.
test-clients: build testdeps
	@for t in clients/*/test.sh; do [ -f "$$t" ] || continue; \
		echo "== $$t"; JAIL_BIN=$(CURDIR)/$(BIN) bash "$$t" || exit 1; done

test-container: build
	bash containertest/run.sh $(CURDIR)/$(BIN)

# The cgroup v2 path, for real: boots Debian's 6.1 kernel under qemu (TCG)
# with cgroup2, shares bin/jail over 9p and runs the limit checks there as
# root and as a delegated unprivileged user (vmtest/README.md). Installs
# qemu-system-x86 and busybox-static, and caches the kernel and image in
# /var/cache/jail-vmtest.
test-cgroup2: build
	bash vmtest/run.sh $(CURDIR)/$(BIN)

# The agent mode of the bench on cgroup v2, in the same VM: jail's
# launchers and bubblewrap under the same emulation, as ratios of medians
# (vmtest/README.md). Not part of test.
bench-vm: build
	BENCH=1 bash vmtest/run.sh $(CURDIR)/$(BIN)

# What the test scripts run, as COMMAND:PACKAGE: a few attack scripts are
# written in Python (raw keyctl, sockets); the network scripts and the soak
# fetch with curl; the network scripts also clone with git (over ssh to an
# sshd of their own), ping, run node, make certificates with openssl and
# read the host's addresses with ip.
TESTDEPS := python3:python3 curl:curl git:git ssh:openssh-client /usr/sbin/sshd:openssh-server \
	ping:iputils-ping node:nodejs openssl:openssl ip:iproute2

# The AppArmor profile's syntax test needs AppArmor 4's parser (the userns
# rule): release/apparmor-parser.sh makes one here, from the host's apparmor
# when it is new enough, else from the next release's package (Debian 12 has
# 3.0.8), without installing that on the host.
APPARMOR_CACHE  := /var/cache/jail-apparmor
APPARMOR_PARSER := $(APPARMOR_CACHE)/apparmor_parser

# One install of what is missing; the package lists are updated only if it
# fails. The scripts start sshd themselves, on a high port: where systemd
# runs, the ssh service the package starts is stopped and disabled again.
testdeps:
	@JAIL_APPARMOR_CACHE=$(APPARMOR_CACHE) bash release/apparmor-parser.sh >/dev/null
	@missing=; for d in $(TESTDEPS); do \
		command -v $${d%%:*} >/dev/null 2>&1 || missing="$$missing $${d#*:}"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing for the test scripts"; \
		$(SUDO) apt-get install -y -qq $$missing >/dev/null 2>&1 || \
		{ $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing; } || exit 1; \
		case "$$missing " in *" openssh-server "*) [ ! -d /run/systemd/system ] || \
			$(SUDO) systemctl disable --now ssh.service ssh.socket >/dev/null 2>&1 || true;; esac; \
	fi

# The profile and seccomp policy parsers, the runner's C plan decoder,
# the init stage's decoder of the plan the runner forwards, and
# status-record escaping (through cgo: Go's coverage does not see the C,
# so these mutate from real plans and strings).
fuzz: deps
	$(GO) test -tags '$(TAGS)' -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./profiles
	$(GO) test -tags '$(TAGS)' -run '^$$' -fuzz '^FuzzPolicy$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./seccomp/policyfile
	$(GO) test -tags '$(TAGS)' -run '^$$' -fuzz '^FuzzRunPlan$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./jail
	$(GO) test -tags '$(TAGS)' -run '^$$' -fuzz '^FuzzForward$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./jail
	$(GO) test -tags '$(TAGS)' -run '^$$' -fuzz '^FuzzStatusString$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./jail
	$(GO) test -tags '$(TAGS)' -run '^$$' -fuzz '^FuzzShArgv$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) .
	$(GO) test -tags '$(TAGS)' -run '^$$' -fuzz '^FuzzSessionID$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./sessions
	$(GO) test -tags '$(TAGS)' -run '^$$' -fuzz '^FuzzClean$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./sessions

# The built-in profiles and seccomp policies decoded ahead of time
# (builtin_layers.go), after editing one; a unit test fails while stale.
generate: deps
	$(GO) generate ./profiles ./seccomp/policyfile

# Static binaries for amd64 and arm64 (arm64 cross-built with Debian's
# gcc-aarch64-linux-gnu and libseccomp-dev:arm64, multiarch; both installed
# when missing, with qemu-user-static to run it), the man page, completions
# and AppArmor profile from the generator build (internal/gendocs), a .deb
# per architecture and SHA256SUMS, in dist/ (release/release.sh). The
# package's maintainer is DEB_MAINTAINER, else git's user.name <user.email>.
release:
	GO='$(GO)' TAGS='$(TAGS)' VERSION='$(VERSION)' COMMIT='$(COMMIT)' OUT=dist bash release/release.sh

# The release installed for real: the host architecture's .deb in a clean
# Debian root (debootstrap, cached in /var/cache/jail-release-test), jail
# check and a jail run there, removed and purged with nothing left behind;
# the man page and the bash, zsh and fish completions exercised; the
# packaged AppArmor profile compiled by AppArmor 4 (release/test.sh).
test-release: release testdeps
	JAIL_APPARMOR_PARSER=$(APPARMOR_PARSER) OUT=dist bash release/test.sh

# Not part of make test: many mixed runs 8 at once, as root and as an
# unprivileged user, 5% SIGKILLed at random; fails on anything left behind
# (cgroup, process, mount, fd, plan cache entry), a hung caller or an exit
# status a run's kind cannot end with, and prints its figures.
SOAK_RUNS ?= 2000
soak: build testdeps
	$(GO) run ./soak -jail $(CURDIR)/$(BIN) -runs $(SOAK_RUNS) -unpriv-runs $(SOAK_RUNS)

# Build, then show a command in the agent profile failing to reach what a
# jail hides from it.
demo: build
	@./scripts/demo.sh $(BIN)

# bwrap for the comparison, curl for the network figures (through the
# allowlist's stack and on the host: bench/network.go). PEERS=1 also
# installs, with npm, the sandboxes agents use today, which the agent mode
# measures when present: Anthropic's sandbox runtime (srt, which needs socat
# and ripgrep) and Codex's; a failed install is said and the bench goes on
# without them. nsjail is measured when on PATH (Debian 12 has no package).
bench: build
	@missing=; command -v bwrap >/dev/null 2>&1 || missing=bubblewrap; \
	command -v curl >/dev/null 2>&1 || missing="$$missing curl"; \
	if [ -n "$(PEERS)" ]; then \
		command -v socat >/dev/null 2>&1 || missing="$$missing socat"; \
		command -v rg >/dev/null 2>&1 || missing="$$missing ripgrep"; \
	fi; \
	if [ -n "$$missing" ]; then \
		echo "installing $$missing for the bench"; \
		$(SUDO) apt-get install -y -qq $$missing >/dev/null 2>&1 || \
		{ $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing; }; \
	fi
	@if [ -z "$(PEERS)" ]; then :; \
	elif ! command -v npm >/dev/null 2>&1; then \
		echo "PEERS=1: npm not found: srt and codex are left out (apt-get install npm)"; \
	else \
		echo "PEERS=1: installing @anthropic-ai/sandbox-runtime and @openai/codex with npm"; \
		$(SUDO) npm install -g --no-fund --no-audit @anthropic-ai/sandbox-runtime @openai/codex >/dev/null 2>&1 || \
			echo "PEERS=1: npm install failed: srt and codex are left out unless already installed"; \
	fi
	$(GO) run ./bench -jail ./$(BIN) -json bin/bench.json

lint: deps
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: the files above need formatting"; exit 1; }
	$(GO) vet -tags '$(TAGS)' ./...
	@command -v staticcheck >/dev/null 2>&1 || [ -x "$$($(GO) env GOPATH)/bin/staticcheck" ] || \
		$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck -tags '$(TAGS)' ./...
	@# The generator build of make release (gendocs.go).
	$(GO) vet -tags 'jail_gendocs netgo osusergo' .
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck -tags 'jail_gendocs netgo osusergo' .

clean:
	rm -rf bin dist
