#!/usr/bin/env bash
# `make cluster`: a whole irisgw cluster on this machine until Ctrl-C (docs/operations.md,
# "Running a cluster"): Redis, Kamailio with cluster/kamailio.cfg, three `irisgw serve` nodes
# (gw1..gw3) and the carrier simulator, every port picked free, everything in one temp dir.
#
#   node -> Kamailio -> simulator   (sip.edgeProxy; the carrier-sim profile names the simulator)
#   simulator -> Kamailio -> a node (round-robin over the dispatcher list)
#
# The cfg tells a node from a carrier by IP address alone, so the nodes and Kamailio are on
# 127.0.0.1 and the simulator (the carrier) on 127.0.0.2, which is on lo too.
#
# Environment:
#   IRISGW_BIN               the irisgw binary (default .build/release/irisgw; `make cluster`
#                            builds it first, this script never builds)
#   IRISGW_CLUSTER_SELFTEST  1: once up, place one call through node 2 (node -> Kamailio ->
#                            simulator and back) and one from 127.0.0.2 through Kamailio to a
#                            node, then stop everything; exit 0 when both worked
#   IRISGW_CLUSTER_KEEP      1: keep the temp dir (logs, data dirs) after the end
#   KAMAILIO, REDIS_SERVER   the binaries (default /usr/sbin/kamailio, redis-server)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${IRISGW_BIN:-$repo/.build/release/irisgw}"
kamailio="${KAMAILIO:-/usr/sbin/kamailio}"
kamcmd="$(dirname "$kamailio")/kamcmd"
redis_server="${REDIS_SERVER:-redis-server}"
selftest="${IRISGW_CLUSTER_SELFTEST:-}"
node_host=127.0.0.1
carrier_host=127.0.0.2

[ -x "$bin" ] || { echo "run-local: no $bin (make release, or set IRISGW_BIN)" >&2; exit 1; }
[ -x "$kamailio" ] || { echo "run-local: no $kamailio (make deps installs kamailio)" >&2; exit 1; }
command -v "$redis_server" >/dev/null || { echo "run-local: no redis-server (make deps installs it)" >&2; exit 1; }

dir="$(mktemp -d /tmp/irisgw-cluster.XXXXXX)"
pids=()
names=()

# Every child gets SIGTERM (a node drains: no calls, so at once), then SIGKILL after 10 s;
# each is waited for, so none is left behind, not even as a zombie.
stopping=
cleanup() {
    [ -n "$stopping" ] && return
    stopping=1
    local i
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null || true; done
    for ((i = 0; i < 100; i++)); do
        local alive=
        for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ -z "$alive" ] && break
        sleep 0.1
    done
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    if [ -n "${IRISGW_CLUSTER_KEEP:-}" ]; then
        echo "run-local: kept $dir"
    else
        rm -rf "$dir"
    fi
    echo "run-local: stopped"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start NAME COMMAND...: in the background, output in $dir/NAME.log.
start() {
    local name=$1
    shift
    "$@" >"$dir/$name.log" 2>&1 &
    pids+=($!)
    names+=("$name")
}

# until SECONDS WHAT COMMAND...: polls COMMAND until it succeeds; fails (with the logs' tails)
# after SECONDS or as soon as a child has exited.
until_ok() {
    local seconds=$1 what=$2
    shift 2
    local deadline=$((SECONDS + seconds)) i
    while ! "$@" >/dev/null 2>&1; do
        for i in "${!pids[@]}"; do
            if ! kill -0 "${pids[i]}" 2>/dev/null; then
                echo "run-local: ${names[i]} exited while waiting for $what:" >&2
                tail -n 30 "$dir/${names[i]}.log" >&2
                return 1
            fi
        done
        if ((SECONDS >= deadline)); then
            echo "run-local: no $what after $seconds s; the logs are in $dir" >&2
            IRISGW_CLUSTER_KEEP=1
            return 1
        fi
        sleep 0.1
    done
}

# free_ports HOST N: N ports free on HOST for both UDP and TCP (SIP takes both on one port),
# from the OS (bind port 0), all different.
free_ports() {
    python3 - "$1" "$2" <<'EOF'
import socket, sys
host, n = sys.argv[1], int(sys.argv[2])
held, ports = [], []
while len(ports) < n:
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    t.bind((host, 0))
    port = t.getsockname()[1]
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        u.bind((host, port))
    except OSError:
        t.close()
        continue
    held += [t, u]
    ports.append(port)
print(" ".join(map(str, ports)))
EOF
}

read -r redis_port kamailio_port sip1 sip2 sip3 api1 api2 api3 <<<"$(free_ports $node_host 8)"
read -r sim_port <<<"$(free_ports $carrier_host 1)"
sip=("$sip1" "$sip2" "$sip3")
api=("$api1" "$api2" "$api3")

# Redis: the cluster's shared state only (members, sessions, limits, secrets): nothing to keep.
mkdir -p "$dir/redis"
start redis "$redis_server" --port "$redis_port" --bind $node_host --save "" --appendonly no \
    --dir "$dir/redis" --daemonize no
until_ok 10 "Redis" redis-cli -h $node_host -p "$redis_port" ping

start carrier-sim "$bin" carrier-sim --listen "$carrier_host:$sim_port" --media-host $carrier_host
until_ok 15 "carrier simulator" grep -qx ready "$dir/carrier-sim.log"

# The carrier-sim profile with the simulator's address and port, inbound from it only.
mkdir -p "$dir/profiles"
sed -e "s|sip:127.0.0.1:5090|sip:$carrier_host:$sim_port|" -e "s|\"127.0.0.1/32\"|\"$carrier_host/32\"|" \
    "$repo/sip-profiles/carrier-sim.json5" >"$dir/profiles/carrier-sim.json5"
grep -q "sip:$carrier_host:$sim_port" "$dir/profiles/carrier-sim.json5" \
    || { echo "run-local: sip-profiles/carrier-sim.json5 no longer names sip:127.0.0.1:5090" >&2; exit 1; }

# The nodes; gw1 first: it gives the cluster its API key and room-token secret.
export CARRIER_SIM_PASSWORD="${CARRIER_SIM_PASSWORD:-carrier-sim}"
for n in 1 2 3; do
    node=gw$n
    mkdir -p "$dir/$node"
    cat >"$dir/$node.json5" <<EOF
{
  profiles: "$dir/profiles",
  sipListen: "$node_host:${sip[n - 1]}",
  apiListen: "$node_host:${api[n - 1]}",
  dataDir: "$dir/$node/data",
  publicURL: "http://$node_host:${api[n - 1]}",
  drainTimeoutSec: 5,
  sip: { edgeProxy: "sip:$node_host:$kamailio_port", trustedProxies: ["$node_host/32"] },
}
EOF
    start "$node" "$bin" serve --config "$dir/$node.json5" \
        --cluster "redis://$node_host:$redis_port" --node-id "$node"
    if [ $n = 1 ]; then until_ok 60 "gw1 ready" grep -qx ready "$dir/gw1.log"; fi
done
until_ok 60 "gw2 ready" grep -qx ready "$dir/gw2.log"
until_ok 60 "gw3 ready" grep -qx ready "$dir/gw3.log"

# Kamailio in front of the three nodes.
mkdir -p "$dir/kamailio"
for n in 1 2 3; do
    echo "1 sip:$node_host:${sip[n - 1]};transport=udp 0 0 duid=gw$n"
done >"$dir/kamailio/dispatcher.list"
start kamailio "$kamailio" -f "$repo/cluster/kamailio.cfg" -DD -E -m 64 -M 8 -Y "$dir/kamailio" \
    -A "LISTEN_IP=\"$node_host\"" -A "SIP_PORT=$kamailio_port" \
    -A "DISPATCHER_LIST=\"$dir/kamailio/dispatcher.list\"" \
    -A "CTL_SOCKET=\"unix:$dir/kamailio/ctl\"" -A "RPC_FIFO=\"$dir/kamailio/rpc.fifo\"" \
    -A "PING_FROM=\"sip:kamailio@$node_host\"" -A PROBE_SEC=1 -A FR_MS=1000 -A CHILDREN=2

# Up: Kamailio holds all three nodes active (their OPTIONS answered 200), and gw1 counts
# three members in Redis.
nodes_up() { [ "$("$kamcmd" -s "unix:$dir/kamailio/ctl" dispatcher.list | grep -c 'FLAGS: AP')" = 3 ]; }
until_ok 30 "three nodes active in Kamailio" nodes_up
key_file="$dir/gw1/data/api-key"
members() {
    curl -sf -H "Authorization: Bearer $(cat "$key_file")" "http://$node_host:$api1/metrics" \
        | grep -qx 'irisgw_cluster_members 3'
}
until_ok 30 "three cluster members" members

cat <<EOF

irisgw cluster on this machine (files in $dir):
  Redis              redis://$node_host:$redis_port
  Kamailio           sip:$node_host:$kamailio_port (UDP and TCP), dispatcher list $dir/kamailio/dispatcher.list
  gw1                SIP $node_host:$sip1, API http://$node_host:$api1, log $dir/gw1.log
  gw2                SIP $node_host:$sip2, API http://$node_host:$api2, log $dir/gw2.log
  gw3                SIP $node_host:$sip3, API http://$node_host:$api3, log $dir/gw3.log
  carrier simulator  sip:$carrier_host:$sim_port (numbers: docs/carrier-testing.md), log $dir/carrier-sim.log
  API key            $key_file (the same on every node)
pids: ${pids[*]}

A call through node 2, out through Kamailio to the simulator's echo number:
    $bin call +15550100001 --from +15557654321 --tone 440 --hangup-after 5 \\
      --api http://$node_host:$api2 --data-dir $dir/gw2/data
A call from the simulator's side, through Kamailio to a node (the carrier-sim profile routes
+15550001000 to routing id alice; every node hears of the call, and an app on any node joins
it: the join is forwarded to the node holding it):
    $bin answer --routing-id alice --tone 600 --timeout 60 \\
      --api http://$node_host:$api2 --data-dir $dir/gw2/data &
    $bin carrier-sim call +15550001000 --from +15559876543 --to $node_host:$kamailio_port \\
      --local-host $carrier_host --hangup-after 5
Nodes seen by Kamailio:
    $kamcmd -s unix:$dir/kamailio/ctl dispatcher.list
Ctrl-C stops everything and removes $dir.
EOF

if [ -n "$selftest" ]; then
    echo "selftest: a call through gw2"
    status=0
    timeout 60 "$bin" call +15550100001 --from +15557654321 --tone 440 --hangup-after 1 \
        --api "http://$node_host:$api2" --data-dir "$dir/gw2/data" || status=$?
    # The simulator saw it: the INVITE went node -> Kamailio -> simulator.
    if [ $status = 0 ] && ! grep -q '^call .*+15550100001' "$dir/carrier-sim.log"; then
        echo "selftest: the simulator never saw the call" >&2
        status=1
    fi
    if [ $status = 0 ]; then
        # Kamailio picks the node; one app on node 2 joins wherever the call is held (its
        # join is forwarded to the holder).
        echo "selftest: a call from 127.0.0.2 through Kamailio to a node"
        start "answer2" "$bin" answer --routing-id alice --tone 600 --timeout 60 \
            --api "http://$node_host:$api2" --data-dir "$dir/gw2/data"
        until_ok 15 "answer2 waiting" grep -q "waiting for a call" "$dir/answer2.log"
        timeout 60 "$bin" carrier-sim call +15550001000 --from +15559876543 --to "$node_host:$kamailio_port" \
            --local-host $carrier_host --hangup-after 1 || status=$?
    fi
    echo "selftest: $([ $status = 0 ] && echo passed || echo "failed ($status)")"
    exit $status
fi

# Until Ctrl-C, or until a child ends by itself (then everything stops).
set +e
wait -n "${pids[@]}"
for i in "${!pids[@]}"; do
    kill -0 "${pids[i]}" 2>/dev/null || echo "run-local: ${names[i]} ended; its log:" >&2
    kill -0 "${pids[i]}" 2>/dev/null || tail -n 20 "$dir/${names[i]}.log" >&2
done
exit 1
