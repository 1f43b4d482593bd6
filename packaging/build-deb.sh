#!/bin/bash
# Builds the Debian package irisgw_<version>_<arch>.deb from an irisgw binary, with dpkg-deb:
#   packaging/build-deb.sh BINARY OUTDIR
# `make deb` gives it the release binary linked with --static-swift-stdlib, so the package
# depends on Debian libraries only (docs/operations.md, "The Debian package"). The files are
# packaging/install.sh's with PREFIX=/usr; the maintainer scripts are packaging/debian/.
#
# Environment:
#   DEB_VERSION         the package version (default: what `BINARY version` prints)
#   DEB_MAINTAINER      the Maintainer field (default: irisgw maintainers <irisgw@localhost>)
#   DEB_COMPRESS        dpkg-deb -Z: xz (default), gzip, zstd or none
#   DEB_COMPRESS_LEVEL  dpkg-deb -z (default: dpkg-deb's)
#   DEB_STRIP           1 (default): strip the binary's symbols in the package; 0 keeps them
#   IRISGW_DEB_ALLOW_UNPACKAGED=1  let through a binary that links libraries no Debian
#                       package provides (a debug build's Swift runtime from /opt/swift),
#                       left out of Depends with a warning: for the packaging test only
set -euo pipefail
umask 022

here=$(cd "$(dirname "$0")" && pwd)
fail() {
    echo "build-deb: $*" >&2
    exit 1
}

[ $# = 2 ] || fail "usage: packaging/build-deb.sh BINARY OUTDIR"
binary=$1
out=$2
[ -f "$binary" ] && [ -x "$binary" ] || fail "$binary is not an executable file"
for tool in dpkg-deb objdump strip; do
    command -v "$tool" >/dev/null || fail "$tool not found (Debian packages dpkg, binutils)"
done

version=${DEB_VERSION:-$("$binary" version | awk '{print $2}')}
[[ "$version" =~ ^[0-9][A-Za-z0-9.+~-]*$ ]] || fail "\"$version\" is not a Debian version (set DEB_VERSION)"
arch=$(dpkg --print-architecture)

# The Debian package of every library the binary names (DT_NEEDED), with the least version
# its shlibs file asks for: "libosip2.so.15" is "libosip2 15" in libosip2-15's shlibs.
# Sonames no installed package provides are collected in $unpackaged.
shlibs=$(cat /var/lib/dpkg/info/*.shlibs 2>/dev/null | grep -v '^udeb:' || true)
depends=()
unpackaged=()
while read -r soname; do
    if [[ "$soname" =~ ^(.+)\.so\.([0-9][0-9.]*)$ ]] || [[ "$soname" =~ ^(.+)-([0-9][0-9.]*)\.so$ ]]; then
        dependency=$(awk -v n="${BASH_REMATCH[1]}" -v v="${BASH_REMATCH[2]}" \
            '$1 == n && $2 == v { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }' <<<"$shlibs")
    else
        dependency=
    fi
    if [ -z "$dependency" ]; then
        # No shlibs entry: the package that owns the file, without a version.
        path=$(ldconfig -p | awk -v s="$soname" '$1 == s { print $NF; exit }')
        owner=
        for candidate in "$path" "/usr$path" "$(readlink -f "$path" 2>/dev/null || true)"; do
            [ -n "$path" ] || break
            owner=$(dpkg-query -S "$candidate" 2>/dev/null | head -1 | cut -d: -f1) && [ -n "$owner" ] && break
        done
        dependency=$owner
    fi
    if [ -n "$dependency" ]; then depends+=("$dependency"); else unpackaged+=("$soname"); fi
done < <(objdump -p "$binary" | awk '$1 == "NEEDED" { print $2 }')
if [ ${#unpackaged[@]} -gt 0 ]; then
    message="$binary links libraries no Debian package provides: ${unpackaged[*]}"
    if [ "${IRISGW_DEB_ALLOW_UNPACKAGED:-}" = 1 ]; then
        echo "build-deb: warning: $message; left out of Depends" >&2
    else
        fail "$message. Build it with the Swift runtime linked in (make deb does:" \
            "swift build -c release --static-swift-stdlib --product irisgw)"
    fi
fi
# The maintainer scripts' useradd is in passwd.
depends+=("passwd")
depends_field=$(printf '%s\n' "${depends[@]}" | sort -u | paste -sd, - | sed 's/,/, /g')

stage=$(mktemp -d "${TMPDIR:-/tmp}/irisgw-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root=$stage/root
mkdir -p "$root"
chmod 0755 "$root"
BINARY=$binary DESTDIR=$root PREFIX=/usr SYSCONFDIR=/etc UNITDIR=/lib/systemd/system \
    "$here/install.sh" >/dev/null
if [ "${DEB_STRIP:-1}" = 1 ]; then
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/irisgw"
fi

mkdir -m 0755 "$root/DEBIAN"
for script in postinst prerm postrm; do
    install -m 0755 "$here/debian/$script" "$root/DEBIAN/$script"
done
# Every file shipped under /etc is a conffile: dpkg keeps the administrator's edits.
(cd "$root" && find etc -type f | sort | sed 's|^|/|') >"$root/DEBIAN/conffiles"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | sort | xargs -d '\n' md5sum) \
    >"$root/DEBIAN/md5sums"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: irisgw
Version: $version
Architecture: $arch
Maintainer: ${DEB_MAINTAINER:-irisgw maintainers <irisgw@localhost>}
Installed-Size: $size
Depends: $depends_field
Suggests: espeak-ng
Section: net
Priority: optional
Description: SIP/PSTN gateway with a control API for apps
 irisgw connects SIP trunks from carriers to apps: calls placed and answered
 through an HTTP and WebSocket control API, media relayed, transcoded, recorded
 or streamed to voice agents, and a dialer page for browsers.
 .
 The systemd unit irisgw.service is installed but neither enabled nor started:
 edit /etc/irisgw/serve.json5 and /etc/irisgw/profiles, then
 "systemctl enable --now irisgw". espeak-ng gives the built-in carrier
 simulator its spoken prompts.
EOF
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"

mkdir -p "$out"
deb=$out/irisgw_${version}_${arch}.deb
compress=(-Z"${DEB_COMPRESS:-xz}")
[ -z "${DEB_COMPRESS_LEVEL:-}" ] || compress+=(-z"$DEB_COMPRESS_LEVEL")
dpkg-deb --root-owner-group "${compress[@]}" --build "$root" "$deb" >/dev/null
echo "build-deb: $deb"
