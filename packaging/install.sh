#!/bin/bash
# Installs irisgw under $DESTDIR$PREFIX: the binary, the dialer page, the example profiles
# and serve file, the irisgw(1) man page made from the binary's own --help texts, and the
# systemd units (irisgw.service, and irisgw@.service for cluster nodes); then the live settings in $SYSCONFDIR/irisgw, unless they are there already.
# `make install` and packaging/build-deb.sh run it (docs/operations.md, "Installing").
#
# Environment:
#   BINARY      the irisgw binary to install (required; it is run for the man page)
#   PREFIX      /usr/local
#   DESTDIR     empty: a staging root put before every path
#   SYSCONFDIR  $PREFIX/etc, or /etc when PREFIX is /usr
#   UNITDIR     $PREFIX/lib/systemd/system (systemd reads /usr/local/lib/systemd/system too)
set -euo pipefail
umask 022

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
fail() {
    echo "install: $*" >&2
    exit 1
}

[ -n "${BINARY:-}" ] || fail "BINARY must name the irisgw binary to install (make install builds .build/static/release/irisgw)"
[ -f "$BINARY" ] && [ -x "$BINARY" ] || fail "$BINARY is not an executable file"
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
if [ -z "${SYSCONFDIR:-}" ]; then
    if [ "$PREFIX" = /usr ]; then SYSCONFDIR=/etc; else SYSCONFDIR=$PREFIX/etc; fi
fi
UNITDIR=${UNITDIR:-$PREFIX/lib/systemd/system}
for path in "$PREFIX" "$SYSCONFDIR" "$UNITDIR"; do
    case "$path" in
    /*) ;;
    *) fail "PREFIX, SYSCONFDIR and UNITDIR must be absolute paths, found \"$path\"" ;;
    esac
done
# A DESTDIR given relative would change meaning once a command changes directory.
case "$DESTDIR" in
"" | /*) ;;
*) DESTDIR=$(pwd)/$DESTDIR ;;
esac

bindir=$PREFIX/bin
datadir=$PREFIX/share/irisgw
mandir=$PREFIX/share/man/man1
etc=$SYSCONFDIR/irisgw

# A template with the install's paths filled in, written with `mode`.
fill() { # template destination mode
    sed -e "s|@BINDIR@|$bindir|g" -e "s|@SYSCONFDIR@|$SYSCONFDIR|g" "$1" >"$2"
    chmod "$3" "$2"
}

# Every file under `from`, to the same relative path under `to`, mode 0644.
copy_tree() { # from to
    (cd "$1" && find . -type f ! -name '.*' | sort) | while read -r file; do
        install -D -m 0644 "$1/$file" "$2/${file#./}"
    done
}

install -d "$DESTDIR$bindir" "$DESTDIR$datadir" "$DESTDIR$mandir" "$DESTDIR$UNITDIR"
install -m 0755 "$BINARY" "$DESTDIR$bindir/irisgw"
# The binary finds its dialer page at ../share/irisgw/app (ControlAPI's StaticFiles.locate).
copy_tree "$repo/web/app" "$DESTDIR$datadir/app"
# The examples as shipped, the carrier test suites with them, kept apart from the live settings.
copy_tree "$repo/sip-profiles" "$DESTDIR$datadir/profiles"
fill "$here/serve.json5.in" "$DESTDIR$datadir/serve.json5" 0644
"$here/man.sh" "$BINARY" "$SYSCONFDIR" | gzip -9n >"$DESTDIR$mandir/irisgw.1.gz"
chmod 0644 "$DESTDIR$mandir/irisgw.1.gz"
fill "$here/irisgw.service.in" "$DESTDIR$UNITDIR/irisgw.service" 0644
# A cluster node's unit, the instance its id (docs/operations.md, "Running a cluster").
fill "$repo/cluster/systemd/irisgw@.service.in" "$DESTDIR$UNITDIR/irisgw@.service" 0644

# The live settings: never written over, so a reinstall keeps what was edited.
install -d "$DESTDIR$etc"
if [ -e "$DESTDIR$etc/serve.json5" ]; then
    echo "install: kept $DESTDIR$etc/serve.json5 (this version's example: $DESTDIR$datadir/serve.json5)"
else
    fill "$here/serve.json5.in" "$DESTDIR$etc/serve.json5" 0644
fi
if [ -e "$DESTDIR$etc/profiles" ]; then
    echo "install: kept $DESTDIR$etc/profiles (this version's examples: $DESTDIR$datadir/profiles)"
else
    install -d "$DESTDIR$etc/profiles"
    install -m 0644 "$repo"/sip-profiles/*.json5 "$DESTDIR$etc/profiles/"
fi
echo "install: irisgw in $DESTDIR$bindir, units $DESTDIR$UNITDIR/irisgw.service and irisgw@.service, settings $DESTDIR$etc"
