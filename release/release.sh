#!/usr/bin/env bash
# release/release.sh: make release. For each architecture (amd64, arm64) a
# static binary, cross-built with Debian's cross gcc and the architecture's
# own static libseccomp (multiarch) where it is not the host's; the man
# page, completions and AppArmor profile written by the generator build of
# jail (gendocs.go, internal/gendocs); a .deb per architecture built with
# dpkg-deb; SHA256SUMS. Each binary runs `jail version` and
# `jail profile show default`, a foreign one under qemu-user. What is
# missing is installed (as root), or named exactly.
#
# Environment (the Makefile sets them): GO, TAGS, VERSION, COMMIT, OUT
# (default dist), ARCHES (default "amd64 arm64"), DEB_MAINTAINER.
set -euo pipefail
cd "$(dirname "$0")/.."
. release/lib.sh

GO=${GO:-go}
TAGS=${TAGS:-netgo osusergo urfave_cli_no_docs}
OUT=${OUT:-dist}
ARCHES=${ARCHES:-amd64 arm64}
host=$(dpkg --print-architecture)

# triplet is an architecture's GNU triplet; qemu, its qemu-user binary.
triplet() {
	case $1 in
	amd64) echo x86_64-linux-gnu ;;
	arm64) echo aarch64-linux-gnu ;;
	*) die "architecture $1: only amd64 and arm64 are released" ;;
	esac
}
qemu() {
	case $1 in
	amd64) echo qemu-x86_64-static ;;
	arm64) echo qemu-aarch64-static ;;
	esac
}

# deps installs what building and checking each architecture needs: for a
# foreign one, dpkg's multiarch for it, its cross gcc and C library, its
# libseccomp-dev and qemu-user-static.
deps() {
	local pkgs=(gcc libseccomp-dev pkg-config dpkg-dev) a t
	for a in $ARCHES; do
		[ "$a" != "$host" ] || continue
		t=$(triplet "$a")
		pkgs+=("gcc-${t//_/-}" "libc6-dev-$a-cross" "libseccomp-dev:$a" qemu-user-static)
	done
	local missing=() p
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	local foreign=()
	for a in $ARCHES; do
		[ "$a" = "$host" ] || dpkg --print-foreign-architectures | grep -qx "$a" || foreign+=("$a")
	done
	if [ -n "$SUDO" ] && ! sudo -n true 2>/dev/null; then
		die "missing: ${missing[*]}; as root: ${foreign[*]:+dpkg --add-architecture ${foreign[*]} && }apt-get update && apt-get install ${missing[*]}"
	fi
	for a in "${foreign[@]}"; do
		say "adding the $a architecture to dpkg (multiarch) for libseccomp-dev:$a"
		$SUDO dpkg --add-architecture "$a"
	done
	[ ${#foreign[@]} -eq 0 ] || $SUDO apt-get update -qq || die "apt-get update failed"
	apt_install "${missing[@]}"
}

# build builds the static binary for one architecture into $OUT.
build() {
	local arch=$1 out=$OUT/jail-linux-$1 env=(GOOS=linux GOARCH="$1" CGO_ENABLED=1)
	if [ "$arch" != "$host" ]; then
		local t
		t=$(triplet "$arch")
		env+=(CC="$t-gcc" PKG_CONFIG_LIBDIR="/usr/lib/$t/pkgconfig:/usr/share/pkgconfig")
	fi
	say "building $out ($VERSION)"
	env "${env[@]}" "$GO" build -trimpath -tags "$TAGS" \
		-ldflags "-s -w -X main.version=$VERSION -X main.commit=$COMMIT -extldflags \"-static\"" -o "$out" .
	if readelf -lW "$out" | grep -q INTERP || readelf -dW "$out" | grep -q NEEDED; then
		die "$out is not static"
	fi
}

# run runs a built binary of arch, under qemu-user when foreign.
run() {
	local arch=$1
	shift
	if [ "$arch" = "$host" ]; then "$@"; else "$(qemu "$arch")" "$@"; fi
}

# smoke runs jail version and jail profile show default of one binary and
# checks what they say.
smoke() {
	local arch=$1 bin=$OUT/jail-linux-$1 v
	v=$(run "$arch" "$bin" version) || die "$bin version failed"
	grep -qx "jail $VERSION" <<<"$v" || die "$bin version says: $v"
	grep -qx "commit $COMMIT" <<<"$v" || die "$bin version has no commit $COMMIT: $v"
	grep -q "^go.* linux/$arch\$" <<<"$v" || die "$bin version is not for linux/$arch: $v"
	grep -q '^libseccomp [0-9]' <<<"$v" || die "$bin version has no libseccomp: $v"
	run "$arch" "$bin" profile show default | grep -q '^\[limits\]' || die "$bin profile show default failed"
	say "$bin runs$([ "$arch" = "$host" ] || echo " under $(qemu "$arch")"): $(head -n1 <<<"$v"), $(grep '^libseccomp' <<<"$v")"
}

# docs writes the generated files, for every package, under $OUT/docs.
docs() {
	if "$GO" list -deps -tags "$TAGS" . | grep -qx "$MODULE/internal/gendocs"; then
		die "internal/gendocs is linked into jail: only the jail_gendocs build may import it"
	fi
	local gen=$OUT/jail-gendocs
	"$GO" build -trimpath -tags "jail_gendocs netgo osusergo" \
		-ldflags "-X main.version=$VERSION -X main.commit=$COMMIT" -o "$gen" .
	rm -rf "$OUT/docs"
	"$gen" -out "$OUT/docs" -date "$(git log -1 --format=%cs)" -binary /usr/bin/jail
	rm -f "$gen"
}

# debversion is VERSION as a Debian version: a tag's (v1.2.3 is 1.2.3,
# v1.2.3-4-gabc is 1.2.3+4.gabc), or before any tag 0~gitDATE.HASH.
debversion() {
	local v=${VERSION#v}
	case $v in
	[0-9]*.*) v=${v/-/+}; echo "${v//-/.}" ;;
	*) echo "0~git$(git log -1 --format=%cd --date=format:%Y%m%d).${v//-/.}" ;;
	esac
}

# deb builds the package of one architecture.
deb() {
	local arch=$1 root=$OUT/deb-$1 ver maint
	ver=$(debversion)
	maint=${DEB_MAINTAINER:-$(git config user.name) <$(git config user.email)>}
	[[ $maint =~ ^[^\<]+\ \<[^\>]+@[^\>]+\>$ ]] || die "the package's maintainer \"$maint\" is not NAME <EMAIL>: set DEB_MAINTAINER"
	rm -rf "$root"
	mkdir -p "$root/DEBIAN" "$root/usr/bin" "$root/etc/jail/profiles"
	install -m 0755 "$OUT/jail-linux-$arch" "$root/usr/bin/jail"
	ln -s jail "$root/usr/bin/jail-sh"
	cp -r "$OUT/docs/." "$root/"
	gzip -9n "$root/usr/share/man/man1/jail.1"
	ln -s jail.1.gz "$root/usr/share/man/man1/jail-sh.1.gz"
	install -m 0644 release/profiles-README "$root/etc/jail/profiles/README"
	find "$root" -type d -exec chmod 0755 {} +
	find "$root" -type f ! -path "$root/usr/bin/*" -exec chmod 0644 {} +
	install -m 0755 release/debian/postinst release/debian/prerm release/debian/postrm "$root/DEBIAN/"
	printf '%s\n' /etc/apparmor.d/jail /etc/jail/profiles/README >"$root/DEBIAN/conffiles"
	(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
	sed -e "s|@VERSION@|$ver|" -e "s|@ARCH@|$arch|" -e "s|@MAINTAINER@|$maint|" \
		-e "s|@SIZE@|$(du -sk --exclude=DEBIAN "$root" | cut -f1)|" release/debian/control >"$root/DEBIAN/control"
	chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) dpkg-deb --root-owner-group -Zxz --build "$root" "$OUT/jail_${ver}_$arch.deb" >/dev/null
	rm -rf "$root"
	say "built $OUT/jail_${ver}_$arch.deb"
}

deps
VERSION=${VERSION:-$(git describe --always --dirty)}
COMMIT=${COMMIT:-$(git rev-parse HEAD)}
MODULE=$("$GO" list -m)
mkdir -p "$OUT"
rm -f "$OUT"/jail-linux-* "$OUT"/jail_*.deb "$OUT/SHA256SUMS"
for arch in $ARCHES; do
	build "$arch"
	smoke "$arch"
done
docs
for arch in $ARCHES; do
	deb "$arch"
done
rm -rf "$OUT/docs"
(cd "$OUT" && sha256sum jail-linux-* jail_*.deb >SHA256SUMS)
say "$OUT:"
(cd "$OUT" && ls -l jail-linux-* jail_*.deb SHA256SUMS | awk '{printf "  %-40s %9d bytes\n", $NF, $5}') >&2
