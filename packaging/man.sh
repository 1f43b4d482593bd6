#!/bin/bash
# Writes the irisgw(1) man page to stdout, made from the binary's own --help texts (the
# command list, then each command's usage), so the page says what the installed binary
# does and never falls behind it. packaging/install.sh runs it at install time.
# Usage: man.sh BINARY [SYSCONFDIR]   (SYSCONFDIR: where the unit's settings are, /etc)
set -euo pipefail

binary=${1:?usage: man.sh BINARY [SYSCONFDIR]}
etc=${2:-/etc}/irisgw

# A --help text, bounded in time (a binary that hangs must not hang an install).
help_of() {
    timeout 20 "$binary" "$@" --help 2>&1 || {
        echo "man.sh: \`$binary $* --help\` failed" >&2
        exit 1
    }
}

# Help text as roff fill-off lines: backslashes and minus signs escaped, a line that starts
# with a control character kept as text.
roff() {
    sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

version=$(timeout 20 "$binary" version | awk '{print $2}')
main=$(help_of)
# The commands, as the main usage lists them (`  serve [options] ...`), each once.
commands=$(printf '%s\n' "$main" | sed -n '/^commands:/,$p' | awk 'NR > 1 && /^  [a-z]/ {print $1}' | awk '!seen[$0]++' |
    grep -v '^version$')

cat <<EOF
.TH IRISGW 1 "" "irisgw $version" "irisgw manual"
.SH NAME
irisgw \\- SIP/PSTN gateway: SIP trunks, media and a control API for apps
.SH SYNOPSIS
.B irisgw
.I command
.RI [ options ]
.SH DESCRIPTION
.B irisgw serve
runs the gateway: SIP trunks to carriers, the media of the calls, and the control API
through which apps place and answer calls. The other commands place or answer calls
through a running gateway, run carrier test suites, or run the test peers.
The texts below are the commands' own
.B \\-\\-help
output.
.SH COMMANDS
.nf
EOF
printf '%s\n' "$main" | roff
echo ".fi"
for command in $commands; do
    echo ".SS irisgw ${command//-/\\-}"
    echo ".nf"
    help_of "$command" | roff
    echo ".fi"
done
cat <<EOF
.SH FILES
.TP
.I $etc/serve.json5
the settings the systemd unit starts
.B irisgw serve
with (\\-\\-config)
.TP
.I $etc/profiles/
trunk profiles, *.json5
.TP
.I $etc/irisgw.env
optional environment of the unit (mode 0600): trunk passwords named by a profile's
passwordEnv, IRISGW_API_KEY
.TP
.I /var/lib/irisgw/
the unit's data directory (mode 0700): calls.sqlite, api\\-key, room\\-token\\-secret
.SH SIGNALS
SIGTERM drains: no new calls, live calls go on for drainTimeoutSec, then BYE.
SIGINT ends every call at once.
SIGHUP rereads the TLS certificates and keys
.RB ( "systemctl reload irisgw" ).
.SH SEE ALSO
.BR systemctl (1);
docs/operations.md, docs/api.md and docs/sip\\-profiles.md in the irisgw sources.
EOF
