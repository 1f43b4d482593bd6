#!/bin/bash
# The newcomer's path on a fresh Debian 12 with systemd as PID 1 (`make try-package`):
# builds the package (or takes DEB=path), makes a fresh bookworm root with debootstrap (cached
# as a tarball, a fresh copy every run), boots it with systemd-nspawn in a network namespace of
# its own, and there does what README.md and docs/operations.md tell an operator: `apt-get
# install ./irisgw_*.deb`, `systemctl enable --now irisgw`, the README's first call through
# the built-in carrier simulator, `systemctl reload`, `systemctl stop` with a call in
# progress, `apt-get purge`. Needs root and Debian's mirror; takes minutes; not part of
# `make test`. The last line says `TRY-PACKAGE ok ...` or `TRY-PACKAGE failed step=...`.
#
# Environment:
#   DEB               the package to try (default: `make deb`, then the package it built)
#   TRY_DIR           the work folder (default .build/try-package); the pristine root's tarball
#                     is kept there, so a second run downloads nothing but apt's lists
#   TRY_MIRROR        Debian's mirror (default http://deb.debian.org/debian)
#   TRY_KEEP=1        keep the container's root after the run (the copy, not the tarball)
#   TRY_BOOT_TIMEOUT  seconds the container may take to boot (default 120)
#   TRY_NSPAWN_ARGS   more systemd-nspawn arguments, for both runs in the root (e.g.
#                     --bind-ro=/opt/swift to try a package of a debug build, which loads
#                     Swift's runtime from there)
set -euo pipefail
umask 022

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
suite=bookworm
mirror=${TRY_MIRROR:-http://deb.debian.org/debian}
try_dir=${TRY_DIR:-$repo/.build/try-package}
boot_timeout=${TRY_BOOT_TIMEOUT:-120}
# What the first call needs besides minbase: systemd as PID 1, D-Bus for systemctl's
# peers, curl for the API checks, CA certificates for apt over https mirrors.
include=systemd,systemd-sysv,dbus,curl,ca-certificates
# The README's first call (README.md, "A call, end to end").
first_call=(irisgw call +15550100001 --from +15557654321 --tone 440 --hangup-after 5)

step=setup
started=$SECONDS
nspawn=
leader=
work=
summary=()

say() { echo "try-package: $*"; }
fail() {
    echo "try-package: step $step: $*" >&2
    exit 1
}
# A step's name goes into the failure line; its start into the timings.
begin() { # name what
    step=$1
    step_started=$SECONDS
    say "== $1: $2"
}
took() { summary+=("$step=$((SECONDS - step_started))s"); }

# Polls `condition` (a command) every half second until it succeeds or `seconds` pass.
wait_for() { # seconds what condition...
    local deadline=$((SECONDS + $1)) what=$2
    shift 2
    until "$@"; do
        [ -z "$nspawn" ] || kill -0 "$nspawn" 2>/dev/null || fail "the container stopped while waiting for $what"
        [ $SECONDS -lt $deadline ] || fail "no $what within $1 s"
        sleep 0.5
    done
}

teardown() {
    if [ -n "$nspawn" ] && kill -0 "$nspawn" 2>/dev/null; then
        # nspawn asks the container's systemd to power off; SIGKILL if it has not within 30 s.
        kill -TERM "$nspawn" 2>/dev/null || true
        local deadline=$((SECONDS + 30))
        while kill -0 "$nspawn" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
        kill -KILL "$nspawn" 2>/dev/null || true
        wait "$nspawn" 2>/dev/null || true
    fi
    if [ -n "$work" ] && [ -d "$work" ]; then
        if [ "${TRY_KEEP:-}" = 1 ]; then
            say "kept the container's root: $work/root (console: $work/console.log)"
        else
            rm -rf --one-file-system "$work"
        fi
    fi
}

finish() {
    local status=$?
    trap - EXIT INT TERM
    # A signal's trap runs inside the command it interrupted, with that command's redirections.
    exec 1>&3 2>&4
    if [ $status != 0 ] && [ -n "$work" ] && [ -s "$work/console.log" ]; then
        echo "--- the container's console (last 30 lines):"
        tail -n 30 "$work/console.log" | sed 's/\x1b\[[0-9;]*m//g'
    fi
    if [ $status != 0 ] && [ -n "$leader" ] && kill -0 "$leader" 2>/dev/null; then
        echo "--- journalctl -u irisgw (last 30 lines):"
        inside journalctl -q -u irisgw -n 30 --no-pager 2>&1 || true
    fi
    teardown
    if [ $status = 0 ] && [ "$step" = finished ]; then
        echo "TRY-PACKAGE ok deb=$(basename "$deb") ${summary[*]} total=$((SECONDS - started))s"
    else
        echo "TRY-PACKAGE failed step=$step after $((SECONDS - started))s"
        [ $status != 0 ] || status=1
    fi
    exit $status
}
# The output the script started with, for finish.
exec 3>&1 4>&2
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, systemd-nspawn): sudo make try-package"

begin tools "debootstrap and systemd-nspawn"
missing=()
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v systemd-nspawn >/dev/null || missing+=(systemd-container)
command -v nsenter >/dev/null || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
    # systemd-container at the installed systemd's version: no upgrade of this machine's systemd.
    installed=$(dpkg-query -W -f='${Version}' systemd 2>/dev/null || true)
    packages=()
    for p in "${missing[@]}"; do
        if [ "$p" = systemd-container ] && [ -n "$installed" ]; then p="$p=$installed"; fi
        packages+=("$p")
    done
    say "installing ${packages[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi
took

begin deb "the package"
if [ -z "${DEB:-}" ]; then
    built=$(mktemp)
    make -C "$repo" --no-print-directory deb | tee "$built"
    DEB=$(sed -n 's/^build-deb: //p' "$built" | tail -n 1)
    rm -f "$built"
    case "$DEB" in /*) ;; *) DEB=$repo/$DEB ;; esac
fi
deb=$DEB
[ -f "$deb" ] || fail "$deb is not a file (DEB=path names a package; without it make deb builds one)"
dpkg-deb -f "$deb" Package | grep -qx irisgw || fail "$deb is not an irisgw package"
say "trying $deb ($(dpkg-deb -f "$deb" Version))"
took

begin debootstrap "a pristine Debian 12 root (cached)"
mkdir -p "$try_dir"
arch=$(dpkg --print-architecture)
key=$(printf '%s %s %s %s' "$suite" "$arch" "$mirror" "$include" | md5sum | cut -c1-8)
tarball=$try_dir/debian-$suite-$arch-minbase-$key.tar
if [ -f "$tarball" ]; then
    say "cached: $tarball"
else
    fresh=$try_dir/debootstrap.tmp
    rm -rf --one-file-system "$fresh"
    say "debootstrap $suite from $mirror (log: $try_dir/debootstrap.log)"
    debootstrap --variant=minbase --include="$include" "$suite" "$fresh" "$mirror" >"$try_dir/debootstrap.log" 2>&1 ||
        {
            tail -n 20 "$try_dir/debootstrap.log" >&2
            fail "debootstrap failed"
        }
    tar --numeric-owner --xattrs -C "$fresh" -cf "$tarball.part" .
    mv "$tarball.part" "$tarball"
    rm -rf --one-file-system "$fresh"
fi
took

begin root "a fresh copy of the root, the package in /root"
work=$(mktemp -d "$try_dir/run.XXXXXX")
root=$work/root
mkdir -m 0755 "$root"
tar --numeric-owner --xattrs -xpf "$tarball" -C "$root"
machine=irisgw-try-$(basename "$work" | cut -d. -f2 | tr -dc 'a-zA-Z0-9')
echo "$machine" >"$root/etc/hostname"
debname=$(basename "$deb")
install -m 0644 "$deb" "$root/root/$debname"
# A host with systemd as PID 1 gives the container a scope and registers it with machined;
# without one (a CI container) nspawn must neither (no bus to ask): it stays in our cgroup.
if [ -d /run/systemd/system ]; then
    nspawn_mode=()
else
    nspawn_mode=(--register=no --keep-unit)
fi
# shellcheck disable=SC2206 # split on purpose: several arguments in one variable
nspawn_mode+=(${TRY_NSPAWN_ARGS:-})
took

begin apt-download "the container's apt lists and the package's Depends, with this machine's network"
# The booted container has only its own loopback, so apt fetches here, in the same root:
# its lists, then what `apt-get install ./irisgw_*.deb` will want, into its own cache.
apt_status=0
systemd-nspawn -q -D "$root" "${nspawn_mode[@]}" --pipe -E DEBIAN_FRONTEND=noninteractive \
    /bin/sh -c "cd /root && apt-get update -qq && apt-get install -y -qq --download-only ./$debname" \
    2>"$work/apt-download.err" || apt_status=$?
# nspawn's one complaint on a host whose /run is not a tmpfs: it leaves an empty folder there.
grep -v '^Attempted to remove disk file system under "/run/systemd/nspawn/propagate/' "$work/apt-download.err" >&2 || true
[ $apt_status = 0 ] || fail "apt in the container could not fetch the package's dependencies"
took

begin boot "systemd-nspawn -b --private-network --machine=$machine"
setsid systemd-nspawn -q -D "$root" -b --private-network --machine="$machine" --console=read-only \
    "${nspawn_mode[@]}" >"$work/console.log" 2>&1 </dev/null &
nspawn=$!
# The container's PID 1: nspawn's child that runs systemd.
find_leader() {
    local child children=()
    read -r -a children 2>/dev/null <"/proc/$nspawn/task/$nspawn/children" || true
    for child in "${children[@]}"; do
        if [ "$(cat "/proc/$child/comm" 2>/dev/null)" = systemd ]; then
            leader=$child
            return 0
        fi
    done
    return 1
}
wait_for 30 "systemd as the container's PID 1" find_leader

# A command inside the container: its namespaces and root, a clean environment.
inside() {
    nsenter -t "$leader" -a -- /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive "$@"
}
booted() {
    state=$(inside systemctl is-system-running 2>/dev/null) || true
    [ "$state" = running ] || [ "$state" = degraded ]
}
wait_for "$boot_timeout" "running system (systemctl is-system-running)" booted
say "systemd in the container: $state, leader pid $leader"
if [ "$state" = degraded ]; then inside systemctl --failed --no-legend || true; fi
took

# What the gateway's unit logged, without the journal's own lines.
unit_log() { inside journalctl -q -u "$1" -o cat --no-pager; }
logged() { # unit fixed-string
    unit_log "$1" | grep -qF -- "$2"
}

begin install "apt-get install ./$debname (README: sudo apt install ./.build/deb/irisgw_*.deb)"
inside sh -c "cd /root && apt-get install -y ./$debname" >"$work/install.log" 2>&1 || {
    cat "$work/install.log"
    fail "apt-get install failed"
}
sed -n '/^The following NEW packages/,/^[0-9]* upgraded/p' "$work/install.log"
[ "$(inside systemctl is-enabled irisgw 2>/dev/null || true)" = disabled ] || fail "the install enabled irisgw.service"
[ "$(inside systemctl is-active irisgw 2>/dev/null || true)" = inactive ] || fail "the install started irisgw.service"
inside getent passwd irisgw >/dev/null || fail "no irisgw user"
data=$(inside stat -c '%a %U:%G' /var/lib/irisgw)
[ "$data" = "700 irisgw:irisgw" ] || fail "/var/lib/irisgw is $data, not 700 irisgw:irisgw"
node_unit=$(inside systemctl show -p FragmentPath --value irisgw@gw1.service)
[ "$node_unit" = /lib/systemd/system/irisgw@.service ] || fail "irisgw@gw1.service loads from '$node_unit'"
say "installed: user irisgw, /var/lib/irisgw $data, irisgw.service disabled and inactive, irisgw@.service there"
took

begin start "systemctl enable --now irisgw, and the carrier simulator beside it"
# The README's first call goes to the carrier-sim profile's proxy, 127.0.0.1:5090, where
# `make run` starts the simulator; beside the service it is `irisgw carrier-sim`.
inside systemd-run --quiet --unit=irisgw-carrier-sim /usr/bin/irisgw carrier-sim
wait_for 30 "carrier simulator ready" logged irisgw-carrier-sim ready
inside systemctl enable --now irisgw
api_up() { inside curl -fsS --max-time 2 http://127.0.0.1:8080/healthz >/dev/null 2>&1; }
unit_active() { [ "$(inside systemctl is-active irisgw 2>/dev/null)" = active ]; }
wait_for 60 "irisgw.service active" unit_active
wait_for 60 "'ready' in journalctl -u irisgw" logged irisgw ready
wait_for 30 "answer from /healthz" api_up
pid=$(inside systemctl show -p MainPID --value irisgw)
user=$(inside stat -c %U "/proc/$pid")
[ "$user" = irisgw ] || fail "the gateway runs as $user, not irisgw"
say "irisgw.service active, pid $pid as user $user; /healthz: $(inside curl -fsS http://127.0.0.1:8080/healthz)"
took

begin first-call "${first_call[*]}"
# As root: the API key is in the service's data directory (the CLI's --data-dir).
call1_status=0
inside timeout 60 "${first_call[@]}" --data-dir /var/lib/irisgw >"$work/call1.out" 2>&1 || call1_status=$?
cat "$work/call1.out"
[ $call1_status = 0 ] && grep -q 'Connected (200 OK)' "$work/call1.out" && grep -q 'ended: completed' "$work/call1.out" ||
    fail "the first call did not connect and end completed (exit status $call1_status)"
room=$(sed -n 's/.*session \([0-9a-f]*\) created.*/\1/p' "$work/call1.out" | head -n 1)
[ -n "$room" ] || fail "no session id in the call's output"
key=$(inside cat /var/lib/irisgw/api-key)
snapshot=$(inside curl -fsS -H "Authorization: Bearer $key" "http://127.0.0.1:8080/v1/sessions/$room")
python3 -c 'import json, sys
s = json.loads(sys.argv[1])
assert s["status"] == "Disconnected" and s["ended"] == "completed", (s["status"], s["ended"])' "$snapshot" ||
    fail "GET /v1/sessions/$room does not say ended completed: $snapshot"
# The call record: calls.sqlite (or its write-ahead log) holds the room.
inside sh -c "grep -qa $room /var/lib/irisgw/calls.sqlite*" || fail "no call record of $room in calls.sqlite"
logged irisgw "call started: outbound on trunk carrier-sim, room $room" || fail "no 'call started' line for $room"
unit_log irisgw | grep -F "call ended: room $room" | grep -q 'reason completed' || fail "no 'call ended' line for $room"
if unit_log irisgw | grep -qF -- "$key"; then fail "the API key is in the journal"; fi
say "call $room: completed; snapshot, call record and text log lines found"
took

begin reload "logFormat json in /etc/irisgw/serve.json5, then systemctl reload irisgw"
inside sed -i 's/^{$/{\n  logFormat: "json",/' /etc/irisgw/serve.json5
inside grep -q 'logFormat: "json"' /etc/irisgw/serve.json5 || fail "could not edit serve.json5"
inside systemctl reload irisgw || fail "systemctl reload irisgw failed"
wait_for 30 "reload line in the journal" logged irisgw 'reload (SIGHUP)'
unit_log irisgw | grep -F 'reload (SIGHUP)' | tail -n 1
took

begin stop "a call in progress, then systemctl stop irisgw (drain)"
inside timeout 60 irisgw call +15550100001 --from +15557654321 --tone 440 --hangup-after 4 \
    --data-dir /var/lib/irisgw >"$work/call2.out" 2>&1 &
call2=$!
wait_for 30 "second call connected" grep -q 'Connected (200 OK)' "$work/call2.out"
stop_started=$SECONDS
inside systemctl stop irisgw || fail "systemctl stop irisgw failed"
stopped_after=$((SECONDS - stop_started))
call2_status=0
wait "$call2" || call2_status=$?
cat "$work/call2.out"
[ $call2_status = 0 ] && grep -q 'ended: completed' "$work/call2.out" ||
    fail "the call in progress did not end completed during the drain (exit status $call2_status)"
result=$(inside systemctl show -p Result --value irisgw)
active=$(inside systemctl is-active irisgw || true)
[ "$result" = success ] && [ "$active" = inactive ] || fail "after stop: $active, result $result"
drain=30
[ $stopped_after -lt $drain ] || fail "stop took ${stopped_after}s, not within the ${drain}s drain"
# The lines since the reload are JSON: the second call's, the drain's.
unit_log irisgw | python3 -c 'import json, sys
lines = [l for l in sys.stdin.read().splitlines() if l.startswith("{")]
entries = [json.loads(l) for l in lines]
calls = [e for e in entries if e.get("component") == "calls"]
assert any(e["msg"].startswith("call started") for e in calls), "no JSON call started line"
assert any(e["msg"].startswith("call ended") and e.get("reason") == "completed" for e in calls), "no JSON call ended line"
print("try-package: %d JSON log lines parse, %d of them the second call'"'"'s" % (len(entries), len(calls)))' ||
    fail "no JSON log lines of the second call after the reload"
logged irisgw 'draining: no new calls; 1 in progress' || fail "no drain line in the journal"
logged irisgw stopped || fail "no 'stopped' line in the journal"
say "stopped ${stopped_after}s after systemctl stop, with the call in progress ended completed (drain ${drain}s)"
took

begin purge "apt-get purge irisgw"
inside systemctl stop irisgw-carrier-sim
inside apt-get purge -y -qq irisgw >"$work/purge.log" 2>&1 || {
    cat "$work/purge.log"
    fail "apt-get purge failed"
}
for path in /usr/bin/irisgw /etc/irisgw /lib/systemd/system/irisgw.service /lib/systemd/system/irisgw@.service; do
    if inside test -e "$path"; then fail "$path is still there after the purge"; fi
done
if inside dpkg -s irisgw >/dev/null 2>&1; then fail "dpkg still knows irisgw after the purge"; fi
inside getent passwd irisgw >/dev/null || fail "the purge removed the irisgw user (documented: kept)"
say "purged: binary, settings and units gone; the irisgw user and /var/lib/irisgw kept, as documented"
took

step=finished
