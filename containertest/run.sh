#!/usr/bin/env bash
# jail in real Docker containers (make test-container): the recipes of the
# README's "In a container" run as root and as uid 1000, the jail's
# isolation checked from inside it (probe.sh), and each container setting
# that cannot run jails checked to fail with a line naming the cause, in a
# run and in jail check. No registry: the image is built from scratch out
# of this host's own files (its programs and their libraries, and jail).
#
#   bash containertest/run.sh [JAIL_BIN]     (default: $JAIL_BIN, else bin/jail)
#
# JAIL_CONTAINERTEST_KEEP=1 keeps each case's output (its directory is said).
#
# Needs root. Installs docker.io with apt-get when dockerd is missing. Uses
# a dockerd that already answers on the default socket; otherwise starts
# one of its own, says so, on a private socket and state directories, with
# no bridge, no iptables rules, no IP forwarding (the host's network stays
# as it is) and its containers' cgroups under /jail-containertest, and at
# the end stops it (by its pid) and removes what it made. Exits non-zero
# when a check failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
jail_bin=${1:-${JAIL_BIN:-$repo/bin/jail}}
started_at=$(date +%s)

log() { echo "containertest: $*" >&2; }
die() {
	echo "containertest: FAIL: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "run as root: it installs packages, may start dockerd and chowns the workspaces it mounts"
[ -x "$jail_bin" ] || die "no jail binary at $jail_bin (build it first, or pass its path)"
jail_bin=$(cd "$(dirname "$jail_bin")" && pwd)/$(basename "$jail_bin")
case "$(ldd "$jail_bin" 2>&1)" in
*"not a dynamic executable"*) ;;
*) die "$jail_bin is not static: it goes into an image of its own" ;;
esac

# --- docker ---------------------------------------------------------------

# apt_install installs without recommends and without starting services:
# a policy-rc.d that refuses every start, for the install only, so the
# package's postinst brings up no docker.service (with its bridge, its
# iptables chains and ip_forward) on a host with an init system.
apt_install() {
	log "installing $* (apt-get, no recommends, no service started)"
	local policy=/usr/sbin/policy-rc.d made_policy=""
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\n# containertest: no service starts while it installs\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		made_policy=1
	fi
	local ok=1
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null; then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null || ok=""
	fi
	[ -z "$made_policy" ] || rm -f "$policy"
	[ -n "$ok" ] || die "apt-get install $* failed"
}
[ -x /usr/sbin/dockerd ] || command -v dockerd >/dev/null || apt_install docker.io
dockerd=$(command -v dockerd || echo /usr/sbin/dockerd)
# docker.io's own client first: another one on PATH may be far newer.
docker_cli=/usr/bin/docker
[ -x "$docker_cli" ] || docker_cli=$(command -v docker) || die "no docker client"

state=/run/jail-containertest
data=/var/lib/jail-containertest
cgparent=jail-containertest
work=$(mktemp -d /tmp/jail-containertest.XXXXXX)
chmod 755 "$work"
image=""
dockerd_pid=""
made_data=""
made_key="" made_etc="" made_containerd=""
made_cgroups=()

cleanup() {
	local rc=$?
	set +e
	if [ -n "$image" ]; then
		"${docker[@]}" rmi -f "$image" >/dev/null 2>&1
	fi
	if [ -n "$dockerd_pid" ]; then
		log "stopping the dockerd it started (pid $dockerd_pid)"
		kill -TERM "$dockerd_pid" 2>/dev/null
		for _ in $(seq 1 100); do
			kill -0 "$dockerd_pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$dockerd_pid" 2>/dev/null; then
			log "dockerd (pid $dockerd_pid) did not stop within 10 s: left running, and its state in $state and $data"
		else
			wait "$dockerd_pid" 2>/dev/null
			# Its state, unless something is still mounted there.
			if grep -qE " ($state|$data)(/| )" /proc/self/mountinfo; then
				log "mounts are left under $state or $data: not removed"
			else
				rm -rf --one-file-system "$state"
				[ -z "$made_data" ] || rm -rf --one-file-system "$data"
				[ -z "$made_key" ] || rm -f /etc/docker/key.json
				[ -z "$made_etc" ] || rmdir /etc/docker 2>/dev/null
				[ -z "$made_containerd" ] || rm -rf --one-file-system /run/containerd
			fi
			for d in "${made_cgroups[@]}"; do
				# Empty once its containers are gone; a cgroup with
				# children left is left too.
				find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
			done
		fi
	fi
	if [ -n "${JAIL_CONTAINERTEST_KEEP:-}" ]; then
		log "each case's output is kept in $work"
	else
		rm -rf --one-file-system "$work"
	fi
	log "done in $(($(date +%s) - started_at)) s"
	exit "$rc"
}
trap cleanup EXIT

docker=("$docker_cli")
if "${docker[@]}" info >/dev/null 2>&1; then
	log "using the dockerd already running (the default socket); it is left running"
else
	mkdir -p "$state"
	[ -d "$data" ] || made_data=1
	# What dockerd writes outside its own directories: left as found.
	[ -e /etc/docker/key.json ] || made_key=1
	[ -e /etc/docker ] || made_etc=1
	[ -e /run/containerd ] || made_containerd=1
	echo "{}" >"$state/daemon.json"
	for c in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -e "$c$cgparent" ] || [ ! -w "$c" ] || [ ! -e "${c}cgroup.procs" ] || made_cgroups+=("$c$cgparent")
	done
	log "no dockerd running: starting one (private socket $state/docker.sock, state in $data, no bridge, no iptables, no IP forwarding); it is stopped at the end"
	"$dockerd" --host "unix://$state/docker.sock" --data-root "$data" --exec-root "$state/exec" \
		--config-file "$state/daemon.json" --pidfile "$state/dockerd.pid" --bridge none --iptables=false --ip-forward=false --ip-masq=false \
		--cgroup-parent "/$cgparent" >"$state/dockerd.log" 2>&1 &
	dockerd_pid=$!
	docker=("$docker_cli" -H "unix://$state/docker.sock")
	for _ in $(seq 1 300); do
		"${docker[@]}" info >/dev/null 2>&1 && break
		kill -0 "$dockerd_pid" 2>/dev/null || { tail -n 20 "$state/dockerd.log" >&2; dockerd_pid=""; die "dockerd exited (its log above)"; }
		sleep 0.1
	done
	"${docker[@]}" info >/dev/null 2>&1 || { tail -n 20 "$state/dockerd.log" >&2; die "dockerd did not answer within 30 s"; }
fi

# --- the image: from scratch, out of this host's files ---------------------

root=$work/rootfs
# usr_path is where a host path goes in the image's merged /usr (Debian
# 12's layout: /bin, /sbin, /lib, /lib64 are links into /usr).
usr_path() {
	case "$1" in
	/bin/* | /sbin/* | /lib/* | /lib64/*) echo "/usr$1" ;;
	*) echo "$1" ;;
	esac
}
put() { # put a host file (followed through links) at its path in the image
	local to
	to=$root$(usr_path "$1")
	mkdir -p "$(dirname "$to")"
	cp -L "$1" "$to"
}
mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib,usr/lib64,usr/local/bin,etc,tmp,root,home/user,ws,ws-image,proc,sys,dev,run,containertest}
for l in bin sbin lib lib64; do ln -s "usr/$l" "$root/$l"; done
chmod 1777 "$root/tmp"
chmod 700 "$root/root"
chown 1000:1000 "$root/home/user" "$root/ws-image"
for p in sh cat id grep ls readlink touch stat unshare wc tail cut tr head mkdir env sleep true rm find; do
	bin=$(type -P "$p") || die "$p is missing on the host: it goes into the image"
	put "$bin"
	for lib in $(ldd "$bin" 2>/dev/null | grep -oE '/[^ ]+' || true); do put "$lib"; done
done
cp "$jail_bin" "$root/usr/local/bin/jail"
cp "$here/inside.sh" "$here/probe.sh" "$root/containertest/"
[ ! -e /etc/ld.so.cache ] || cp /etc/ld.so.cache "$root/etc/"
printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n' >"$root/etc/group"
image=jail-containertest:$$
tar -C "$root" -c . | "${docker[@]}" import - "$image" >/dev/null || die "docker import failed"
log "image $image: $(du -sh "$root" | cut -f1), from this host's files and $jail_bin"

# --- the checks -------------------------------------------------------------

failed=0
bad() {
	echo "containertest: FAIL: $*" >&2
	failed=1
}
# expect CASE FILE REGEX: a line of the case's output matches (grep -E).
expect() {
	grep -qE -- "$3" "$2" || bad "$1: no line matches /$3/"
}
expect_not() {
	! grep -qE -- "$3" "$2" || bad "$1: a line matches /$3/, which must not: $(grep -E -m1 -- "$3" "$2")"
}
owner() { # owner CASE PATH UID: PATH exists and belongs to UID on the host
	local got
	got=$(stat -c %u "$2" 2>/dev/null) || {
		bad "$1: $2 was not written"
		return
	}
	[ "$got" = "$3" ] || bad "$1: $2 belongs to uid $got on the host, want $3"
}
dump() { # the output, when the case failed
	[ "$failed" = 0 ] || sed 's/^/    | /' "$1" >&2
}

# The documented recipe (README, "In a container"): jail's seccomp profile
# and a procfs jail may mount. Where AppArmor is on, Docker's profile for
# containers refuses mount too: the README says to add apparmor=unconfined,
# and this does the same.
recipe=(--security-opt "seccomp=$repo/deploy/seccomp-jail.json" --security-opt systempaths=unconfined)
if [ -d /sys/kernel/security/apparmor ]; then
	recipe+=(--security-opt apparmor=unconfined)
	log "AppArmor is on: the recipe gets apparmor=unconfined"
fi
run_args=(-p agent --limits-mode best-effort --workspace /ws)
want_limits='"limits":\{"cgroup":"none"'

docker_run() { # docker_run OUT DOCKER-ARGS... -- IMAGE-COMMAND...: exit status in $rc
	local out=$1
	shift
	local args=()
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	rc=0
	"${docker[@]}" run --rm --network none "${args[@]}" "$image" "$@" >"$out" 2>&1 || rc=$?
}

# works CASE WS-OWNER UID-MAP PATH DOCKER-ARGS...: the recipe runs a jail,
# and the jail is isolated as it should be.
works() {
	local name=$1 ws_owner=$2 map=$3 path=$4
	shift 4
	local ws=$work/ws-$name out=$work/$name.out
	local before=$failed
	failed=0
	mkdir "$ws"
	chown "$ws_owner:$ws_owner" "$ws"
	docker_run "$out" -v "$ws:/ws" "$@" -- sh /containertest/inside.sh "${run_args[@]}"
	[ "$rc" = 0 ] || bad "$name: the container exited $rc"
	expect "$name" "$out" '^jail exit 7$'
	expect "$name" "$out" '"exit_code":7,'
	expect "$name" "$out" '^uid 1000$'
	for c in CapInh CapPrm CapEff CapBnd CapAmb; do
		expect "$name" "$out" "^$c:[[:space:]]+0+$"
	done
	expect "$name" "$out" '^NoNewPrivs:[[:space:]]+1$'
	expect "$name" "$out" '^Seccomp:[[:space:]]+2$'
	expect "$name" "$out" "^uid_map +1000 +$map +1$"
	for n in user mnt pid net ipc uts cgroup; do
		local outer inner
		outer=$(sed -n "s/^outer ns $n //p" "$out")
		inner=$(sed -n "s/^jail ns $n //p" "$out")
		if [ -z "$inner" ] || [ "$outer" = "$inner" ]; then
			bad "$name: the jail's $n namespace ($inner) is not its own (the container's: $outer)"
		fi
	done
	expect "$name" "$out" '^pid1 jail-init$'
	expect "$name" "$out" '^procs [2-5]$'
	expect "$name" "$out" '^netdevs lo $'
	expect "$name" "$out" "/proc/kcore.*No such file"
	expect "$name" "$out" '^cmdline bytes 0$'
	expect "$name" "$out" '^proc/sys read-only$'
	expect "$name" "$out" '^unshare 1$'
	expect "$name" "$out" '"denied":\[.*"syscall":"unshare"'
	expect "$name" "$out" '^workspace written$'
	expect "$name" "$out" "\"userns\":\\{[^}]*\"path\":\"$path\""
	expect "$name" "$out" "$want_limits"
	owner "$name" "$ws/made-in-jail" "$ws_owner"
	dump "$out"
	[ "$failed" = 1 ] || log "ok    $name"
	failed=$((failed | before))
}

# refused CASE WS-OWNER WANT-RUN WANT-CHECK WANT-FIX DOCKER-ARGS...: a
# setting that cannot run jails: the run exits 125 with jail's line naming
# the cause (WANT-RUN), nothing is written, and jail check exits non-zero
# with a FAIL line matching WANT-CHECK and a cause or fix line matching
# WANT-FIX (each blocker's own). The workspace is the jail's to write
# (WS-OWNER), so that the setting is what stops it.
refused() {
	local name=$1 ws_owner=$2 want_run=$3 want_check=$4 want_fix=$5
	shift 5
	local ws=$work/ws-$name out=$work/$name.out check=$work/$name.check
	local before=$failed
	failed=0
	mkdir "$ws"
	chown "$ws_owner:$ws_owner" "$ws"
	docker_run "$out" -v "$ws:/ws" "$@" -- sh /containertest/inside.sh "${run_args[@]}"
	expect "$name" "$out" '^jail exit 125$'
	expect "$name" "$out" "^jail: $want_run"
	expect_not "$name" "$out" '^workspace written$'
	[ ! -e "$ws/made-in-jail" ] || bad "$name: the jail wrote the workspace"
	dump "$out"
	docker_run "$check" "$@" -- jail check
	[ "$rc" != 0 ] || bad "$name: jail check exited 0"
	expect "$name (jail check)" "$check" "^FAIL  $want_check"
	expect "$name (jail check)" "$check" '^      fix: .'
	expect "$name (jail check)" "$check" "^      (cause|fix): $want_fix"
	expect_not "$name (jail check)" "$check" '^      fix: run jail as root'
	dump "$check"
	[ "$failed" = 1 ] || log "ok    $name: refused ($(grep -m1 '^jail: ' "$out" | cut -c1-100)...)"
	failed=$((failed | before))
}

log "the recipe, as uid 1000 and as root:"
works uid1000 1000 1000 unprivileged --user 1000:1000 "${recipe[@]}"
# Root with Docker's default capabilities, no CAP_SYS_ADMIN: the jail is
# user.host_uid (65534), whose the workspace must be.
works root 65534 65534 unprivileged "${recipe[@]}"
# Root with CAP_SYS_ADMIN: the root path, the workspace (a volume: the
# container's overlayfs cannot be idmapped) idmapped to its owner.
works root-sys-admin 1000 65534 root --cap-add SYS_ADMIN "${recipe[@]}"
# --privileged: no seccomp filter, /proc unmasked, the cgroupfs writable.
# uid 1000 has no cgroup delegated to it there: best-effort still.
works privileged-uid1000 1000 1000 unprivileged --user 1000:1000 --privileged
# Root gets the cgroup limits enforced, where the host lets a privileged
# container start (a VM whose own bounding set lacks a capability does not:
# runc asks for all of them).
docker_run "$work/privileged-start.out" --privileged -- true
if [ "$rc" = 0 ]; then
	run_args=(-p agent --workspace /ws) want_limits='"limits":\{"cgroup":"v[12]"'
	works privileged-root 1000 65534 root --privileged
	run_args=(-p agent --limits-mode best-effort --workspace /ws) want_limits='"limits":\{"cgroup":"none"'
else
	log "skip  privileged-root: this host cannot start a privileged root container: $(tail -n 1 "$work/privileged-start.out" | cut -c1-160)"
fi

log "the settings that cannot run jails:"
for who in root uid1000; do
	# Root's jail is user.host_uid (65534), uid 1000's itself.
	user=() ws_owner=65534
	[ "$who" = root ] || user=(--user 1000:1000) ws_owner=1000
	refused "defaults-$who" $ws_owner 'create a user namespace' \
		'user namespaces: creating one failed: .*seccomp filter' \
		'run the container with jail.s seccomp profile.*seccomp=deploy/seccomp-jail.json' "${user[@]}"
	refused "seccomp-only-$who" $ws_owner 'proc /proc: mount a procfs' \
		'/proc: masked: ' 'run the container with /proc unmasked: docker run --security-opt systempaths=unconfined' "${user[@]}" \
		--security-opt "seccomp=$repo/deploy/seccomp-jail.json"
	# The recipe, but the cgroup limits enforced: the container's cgroupfs
	# is read-only.
	run_args=(-p agent --workspace /ws)
	refused "enforced-limits-$who" $ws_owner 'cgroup limits.*mounted read-only' \
		'cgroup limits: .*the cgroup filesystem is mounted read-only' 'run jail with --limits-mode best-effort' \
		"${user[@]}" "${recipe[@]}"
	run_args=(-p agent --limits-mode best-effort --workspace /ws)
	# CAP_SYS_ADMIN under Docker's own seccomp profile: keyctl refused.
	# jail check's own bind is under $TMPDIR, on the image's overlayfs:
	# root's probe stops there (and says so) before it meets keyctl.
	want_cause='the container.s seccomp profile refuses keyctl'
	[ "$who" != root ] || want_cause='jail as root idmaps each writable bind .* is on overlayfs'
	refused "sys-admin-docker-seccomp-$who" $ws_owner 'join a new session keyring: a seccomp filter outside jail refuses keyctl' \
		'a jail runs' "$want_cause" "${user[@]}" --cap-add SYS_ADMIN
done
# Root with CAP_SYS_ADMIN and the workspace on the image's own overlayfs.
run_args=(-p agent --limits-mode best-effort --workspace /ws-image)
refused overlay-workspace-root 1000 'bind /ws-image: it is on overlayfs' 'a jail runs' '.*overlayfs' --cap-add SYS_ADMIN "${recipe[@]}"
run_args=(-p agent --limits-mode best-effort --workspace /ws)

[ "$failed" = 0 ] || die "some checks failed (above)"
log "all checks passed"
