#!/usr/bin/env bash
# release/test.sh: make test-release, after make release. Checks what
# release.sh made: SHA256SUMS; each .deb's contents (the arm64 one holds the
# arm64 binary and the same generated files); the packaged AppArmor profile
# compiled by AppArmor 4 ($JAIL_APPARMOR_PARSER, from make testdeps); the
# man page through groff and man; the completions in bash, zsh and fish
# (complete-test.sh). Then the host architecture's .deb for real, in a clean
# Debian root (debootstrap of the host's release, with apparmor; cached as a
# tarball in /var/cache/jail-release-test), the root of a mount namespace
# of its own: dpkg -i, jail check, jail runs, the profiles README's example,
# the postinst with AppArmor 3 (the profile disabled) and with AppArmor 4
# (enabled, not loaded: this kernel has no AppArmor), dpkg -r leaving only
# the conffiles, dpkg -P leaving nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
. release/lib.sh

OUT=${OUT:-dist}
PARSER=${JAIL_APPARMOR_PARSER:?set JAIL_APPARMOR_PARSER: make testdeps makes one}
CACHE=${JAIL_RELEASE_TEST_CACHE:-/var/cache/jail-release-test}
host=$(dpkg --print-architecture)
started=$SECONDS

[ "$(id -u)" = 0 ] || die "test-release needs root: it chroots into a Debian root it makes"
apt_install debootstrap zsh fish man-db groff-base

# 1. The files release.sh made.
(cd "$OUT" && sha256sum --quiet -c SHA256SUMS) || die "SHA256SUMS does not match $OUT"
debs=("$OUT"/jail_*.deb)
work=$(mktemp -d /var/tmp/jail-release-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
for deb in "${debs[@]}"; do
	arch=$(dpkg-deb -f "$deb" Architecture)
	mkdir "$work/$arch"
	dpkg-deb -x "$deb" "$work/$arch"
	cmp "$work/$arch/usr/bin/jail" "$OUT/jail-linux-$arch" || die "$deb's jail is not $OUT/jail-linux-$arch"
	[ "$(readlink "$work/$arch/usr/bin/jail-sh")" = jail ] || die "$deb: /usr/bin/jail-sh is not a link to jail"
	[ "$(dpkg-deb -f "$deb" Package)" = jail ] || die "$deb: not the jail package"
	[ "$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)" = "$(printf '/etc/apparmor.d/jail\n/etc/jail/profiles/README')" ] ||
		die "$deb: the conffiles are not the AppArmor profile and the README"
done
[ -d "$work/$host" ] || die "no .deb for this host's architecture ($host) in $OUT"
for arch in "$work"/*; do
	diff -r --exclude=jail "$work/$host/usr/share" "$arch/usr/share" >/dev/null &&
		diff -r "$work/$host/etc" "$arch/etc" >/dev/null || die "${arch##*/}'s generated files differ from $host's"
done
say "ok: SHA256SUMS, and the contents of ${#debs[@]} packages"

# 2. The AppArmor profile: for /usr/bin/jail, compiled as Ubuntu 24.04's
# kernel would take it, every warning an error.
profile=$work/$host/etc/apparmor.d/jail
grep -q '^profile jail "/usr/bin/jail" flags=(unconfined) {$' "$profile" || die "the packaged profile is not for /usr/bin/jail"
"$PARSER" -Q -K -T --warn=all --Werror "$profile" || die "AppArmor 4 refuses the packaged profile"
say "ok: the AppArmor profile compiles with $("$PARSER" --version | head -n1)"

# 3. The man page: no groff warning; man renders it; whatis finds both names.
page=$work/$host/usr/share/man/man1/jail.1.gz
warnings=$(zcat "$page" | groff -man -Tutf8 -ww -z 2>&1)
[ -z "$warnings" ] || die "groff warns about jail.1: $warnings"
MANWIDTH=80 man -l "$page" 2>/dev/null | grep -q '^ *jail profile show \[-p\] NAME \[overrides\]$' || die "man -l jail.1 does not show the synopsis"
lexgrog "$page" | grep -q 'jail - run one command' || die "lexgrog finds no NAME section in jail.1"
say "ok: the man page ($(MANWIDTH=80 man -l "$page" 2>/dev/null | wc -l) lines)"

# 4. The completions, in the three shells.
bash release/complete-test.sh "$work/$host"

# 5. The clean root, made once.
codename=$(os_field VERSION_CODENAME)
tarball=$CACHE/$codename-minbase-apparmor.tar
if [ ! -f "$tarball" ]; then
	say "making a clean $codename root with debootstrap (once; cached in $tarball)"
	mkdir -p "$CACHE"
	rm -rf "$work/make-root"
	debootstrap --variant=minbase --include=apparmor "$codename" "$work/make-root" "$(archive_uri)" >"$work/debootstrap.log" 2>&1 ||
		die "debootstrap failed: $(tail -n 5 "$work/debootstrap.log")"
	tar -C "$work/make-root" -cf "$tarball.tmp" .
	mv "$tarball.tmp" "$tarball"
	rm -rf "$work/make-root"
fi
root=$work/root
mkdir "$root"
tar -C "$root" -xf "$tarball"
deb=$(ls "$OUT"/jail_*_"$host".deb)
cp "$deb" "$root/var/tmp/jail.deb"
cp release/profiles-README "$root/var/tmp/README.example"

# The steps inside the root. jail's runs as root keep their state in
# /var/lib/jail (the users', which purge leaves): pointed elsewhere here so
# that what the package leaves is all that is compared.
cat >"$root/var/tmp/steps.sh" <<'EOF'
set -eu
export JAIL_STATE_DIR=/tmp/jail-state
snap() {
	find / -xdev \( -path /var/tmp -o -path /var/log -o -path /var/cache/jail-apparmor -o -path /.host \) -prune -o \
		! -path /var/lib/dpkg/status ! -path /var/lib/dpkg/status-old ! -path '/var/lib/dpkg/triggers/*' \
		-printf '%p %y %m %l\n' | sort >"/var/tmp/snap.$1"
}
step() { printf '  %s\n' "$*"; }
fails() {
	if "$@" >/dev/null 2>&1; then
		echo "should have failed: $*"
		exit 1
	fi
}
snap before

step "dpkg -i: AppArmor 3 here cannot parse the userns rule, so the profile is disabled the AppArmor way"
dpkg -i /var/tmp/jail.deb >/var/tmp/dpkg.log 2>&1 || { cat /var/tmp/dpkg.log; exit 1; }
test "$(readlink /etc/apparmor.d/disable/jail)" = ../jail
fails sh -c 'apparmor_parser -Q -K -T </etc/apparmor.d/jail'
apparmor_parser -Q -K -T /etc/apparmor.d/jail 2>&1 | grep -q 'Skipping profile in /etc/apparmor.d/disable: jail'
test "$(readlink /usr/bin/jail-sh)" = jail
test "$(dpkg-query -W -f '${Status}' jail)" = "install ok installed"

step "jail version: $(jail version | head -n1)"
jail --version | grep -q '^libseccomp '
step "jail check"
jail check >/var/tmp/check.out 2>&1 || { cat /var/tmp/check.out; exit 1; }
step "jail -p default -- true"
jail -p default -- true
step "a jail has its own hostname, not the host's secrets; the command's status passes through"
test "$(jail -p default -- cat /proc/sys/kernel/hostname)" = jail
fails jail -p default -- cat /etc/shadow
set +e
jail -p default -- sh -c 'exit 3'
status=$?
set -e
test "$status" = 3
step "jail-sh -c, in a workspace of an unprivileged owner"
mkdir /tmp/ws
chown 65534:65534 /tmp/ws
test "$(cd /tmp/ws && jail-sh -c 'echo $((6*7)) > answer; cat answer')" = 42
test "$(stat -c %u /tmp/ws/answer)" = 65534

step "the README's example, as /etc/jail/profiles/ci.toml"
sed -n '/^  # \/etc\/jail\/profiles\/ci.toml/,/^  allow/p' /var/tmp/README.example | sed '1d; s/^  //' >/etc/jail/profiles/ci.toml
jail profiles | grep -q '^ci .*/etc/jail/profiles/ci.toml'
jail profile show ci | grep -q '"pypi.org"'
rm /etc/jail/profiles/ci.toml

step "bash completes the installed profiles with the installed jail"
bash -c '. /usr/share/bash-completion/completions/jail; COMP_WORDS=(jail -p ""); COMP_CWORD=2; _jail; printf "%s\n" "${COMPREPLY[@]}"' | grep -qx agent

step "dpkg -i with AppArmor 4's parser first on PATH: the profile parses, is enabled, and is not loaded (no AppArmor in this kernel)"
PATH=$AA4:$PATH dpkg -i /var/tmp/jail.deb >/var/tmp/dpkg.log 2>&1 || { cat /var/tmp/dpkg.log; exit 1; }
test ! -e /etc/apparmor.d/disable/jail

step "an admin's aa-disable link (absolute) stays across an upgrade: the profile stays disabled"
ln -s /etc/apparmor.d/jail /etc/apparmor.d/disable/jail
PATH=$AA4:$PATH dpkg -i /var/tmp/jail.deb >/var/tmp/dpkg.log 2>&1 || { cat /var/tmp/dpkg.log; exit 1; }
test "$(readlink /etc/apparmor.d/disable/jail)" = /etc/apparmor.d/jail
rm /etc/apparmor.d/disable/jail

dpkg -i /var/tmp/jail.deb >/var/tmp/dpkg.log 2>&1 || { cat /var/tmp/dpkg.log; exit 1; }
test -L /etc/apparmor.d/disable/jail

step "dpkg -r: only the conffiles stay (and the disable/ link while the profile does), and dpkg's note of them"
dpkg -r jail >/var/tmp/dpkg.log 2>&1 || { cat /var/tmp/dpkg.log; exit 1; }
snap removed
diff /var/tmp/snap.before /var/tmp/snap.removed | sed -n 's/^> //p' | cut -d' ' -f1 >/var/tmp/left
printf '%s\n' /etc/apparmor.d/disable/jail /etc/apparmor.d/jail /etc/jail /etc/jail/profiles /etc/jail/profiles/README \
	/var/lib/dpkg/info/jail.list /var/lib/dpkg/info/jail.postrm | diff - /var/tmp/left
test -z "$(diff /var/tmp/snap.before /var/tmp/snap.removed | grep '^<' || true)"

step "dpkg -P: nothing left"
dpkg -P jail >/var/tmp/dpkg.log 2>&1 || { cat /var/tmp/dpkg.log; exit 1; }
snap purged
diff /var/tmp/snap.before /var/tmp/snap.purged
test -z "$(dpkg-query -W -f '${Status}' jail 2>/dev/null | grep -v 'not-installed' || true)"
EOF

say "installing $(basename "$deb") in a clean $codename root"
aa4=$(dirname "$PARSER")
unshare --mount --propagation private bash -euc '
	root=$1 aa4=$2
	mount --bind "$root" "$root"
	mount -t proc proc "$root/proc"
	mount --rbind /sys "$root/sys"
	# Not the host kernel'"'"'s AppArmor: the postinst loads the profile
	# where it sees AppArmor enabled, and the root'"'"'s package must not
	# load or unload the host'"'"'s policy.
	for d in kernel/security module/apparmor; do
		[ ! -d "$root/sys/$d" ] || mount -t tmpfs -o ro,size=4k tmpfs "$root/sys/$d"
	done
	mount --rbind /dev "$root/dev"
	mount -t tmpfs tmpfs "$root/tmp"
	mount -t tmpfs tmpfs "$root/run"
	mkdir -p "$root$aa4" "$root/.host"
	mount --bind "$aa4" "$root$aa4"
	# pivot_root, not chroot: the kernel refuses a new user namespace to
	# a chrooted process.
	cd "$root"
	pivot_root . .host
	umount -l /.host
	exec /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root AA4="$aa4" sh /var/tmp/steps.sh
' bash "$root" "$aa4" || die "the clean-root install test failed"
say "ok: test-release in $((SECONDS - started)) s"
