#!/usr/bin/env bash
# Runs built fuzz targets (`make fuzz`, `make fuzz-smoke`): each one over its seeds once,
# then SECONDS of fuzzing from its corpus (.build/fuzz/corpus-NAME, kept between runs).
# A crash, leak or timeout stops here with exit 1, and the input that caused it stays in
# .build/fuzz/ (NAME-crash-..., NAME-leak-..., NAME-timeout-...).
#
#   Fuzz/run.sh [--fresh] SECONDS TARGET...      (targets: sip sdp sip-session rtp api stun dtls)
#
# FUZZ_DIR names the build folder (default .build/fuzz; `make fuzz-smoke` builds unoptimised
# in .build/fuzz-smoke).
# --fresh (`make fuzz-smoke`) starts from the seeds alone, in a corpus folder emptied first,
# so a smoke run takes the same few seconds however long `make fuzz` has grown the corpus.
set -uo pipefail
# A trap goes to libFuzzer's handler (the input saved, the stack printed), not to the Swift
# backtracer, which trips AddressSanitizer while it reads the crashed process.
export SWIFT_BACKTRACE=enable=no
cd "$(dirname "$0")/.."
dir=${FUZZ_DIR:-.build/fuzz}
shared=../shared/conformance
fresh=false
if [ "${1:-}" = --fresh ]; then fresh=true; shift; fi
seconds=${1:?usage: Fuzz/run.sh [--fresh] SECONDS TARGET...}
shift

# Seed folders of a target: its own (Fuzz/seeds/NAME), and for the parser the RFC 4475 and
# RFC 5118 messages of the shared conformance corpus when it is there.
seeds() {
  local t=$1
  [ -d "Fuzz/seeds/$t" ] && echo "Fuzz/seeds/$t"
  if [ "$t" = sip ]; then
    for d in "$shared/rfc4475" "$shared/rfc5118/wire"; do [ -d "$d" ] && echo "$d"; done
  fi
  return 0
}

max_len() {
  case $1 in
    sip-session) echo 16384 ;;
    api) echo 32768 ;;   # the 5000-deep seeds; the limit itself is 64 KiB
    *) echo 8192 ;;
  esac
}

# Prints why the run failed and where its input is, then exits 1.
fail() {
  local t=$1 log=$2 what=$3
  local unit
  unit=$(grep -o "Test unit written to [^ ]*" "$log" | tail -1 | sed 's/Test unit written to //')
  echo
  echo "FUZZ FAILURE: fuzz-$t $what."
  if [ -n "$unit" ]; then
    echo "  the input: $unit"
    echo "  reproduce: $dir/fuzz-$t $unit"
    [ "$t" = sip-session ] && echo "  with every message printed: FUZZ_TRACE=1 $dir/fuzz-$t $unit"
  fi
  echo "  full log: $log; its end:"
  # Swift symbols demangled when the toolchain's swift-demangle is at hand.
  grep -v "^#[0-9]" "$log" | tail -40 | { if command -v swift-demangle >/dev/null; then swift-demangle --simplified; else cat; fi; } \
    | sed 's/^/    /'
  exit 1
}

# One target: its seeds, then its fuzzing; prints its line, or why it failed (exit 1).
one() {
  local t=$1
  local bin=$dir/fuzz-$t
  [ -x "$bin" ] || { echo "fuzz: $bin is not built (make fuzz-build)" >&2; exit 1; }
  mapfile -t seed_dirs < <(seeds "$t")
  local corpus=$dir/corpus-$t
  if $fresh; then corpus=$dir/smoke-corpus-$t; rm -rf "$corpus"; fi
  mkdir -p "$corpus"
  local flags=(-max_len="$(max_len "$t")" -timeout=30 -rss_limit_mb=2048 -artifact_prefix="$dir/$t-")
  case $t in sip|sip-session) flags+=(-dict=Fuzz/dict/sip.dict) ;; esac
  local log=$dir/fuzz-$t.log
  local t0=$SECONDS

  # 1. Every seed once (no mutation, nothing added to the corpus). A fresh (smoke) run skips
  # it: its fuzzing starts from the seeds alone and runs every one before it mutates, so this
  # pass would only run them twice (13 s of fuzz-sip-session's smoke).
  local n=0
  for d in "${seed_dirs[@]}"; do n=$((n + $(find "$d" -type f | wc -l))); done
  : >"$log"
  if [ "$n" -gt 0 ] && ! $fresh; then
    "$bin" "${flags[@]}" -runs=0 "${seed_dirs[@]}" >"$log" 2>&1 || fail "$t" "$log" "failed on a seed"
  fi

  # 2. Fuzzing for $seconds from the corpus and the seeds.
  "$bin" "${flags[@]}" -max_total_time="$seconds" -print_final_stats=1 "$corpus" "${seed_dirs[@]}" >>"$log" 2>&1 \
    || fail "$t" "$log" "crashed, leaked or hung (on a seed or while fuzzing)"
  local runs rate cov
  runs=$(grep -oE "stat::number_of_executed_units:[[:space:]]*[0-9]+" "$log" | tail -1 | grep -oE "[0-9]+$")
  rate=$(grep -oE "stat::average_exec_per_sec:[[:space:]]*[0-9]+" "$log" | tail -1 | grep -oE "[0-9]+$")
  cov=$(grep -E "^#[0-9]+.*(DONE|cov:)" "$log" | tail -1 | grep -o "cov: [0-9]* ft: [0-9]* corp: [^ ]*")
  echo "fuzz-$t: $n seeds ok; ${seconds}s fuzzing: ${runs:-?} runs, ${rate:-?} exec/s, $cov ($((SECONDS - t0)) s in all)"
}

# The targets run side by side, one per core (libFuzzer uses one); their lines print in order.
started=$SECONDS
parallel=${FUZZ_PARALLEL:-$(nproc)}
for t in "$@"; do
  rm -f "$dir/fuzz-$t.status"
  ( one "$t"; ) >"$dir/fuzz-$t.out" 2>&1 && echo 0 >"$dir/fuzz-$t.status" || echo 1 >"$dir/fuzz-$t.status" &
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n; done
done
wait
failed=0
for t in "$@"; do
  cat "$dir/fuzz-$t.out"
  [ "$(cat "$dir/fuzz-$t.status" 2>/dev/null)" = 0 ] || failed=1
done
[ $failed = 0 ] || exit 1
echo "fuzz: $# targets passed in $((SECONDS - started)) s"
