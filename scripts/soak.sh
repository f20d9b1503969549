#!/usr/bin/env bash
# A long run of the lease workload at the scale of a busy GFS master, to
# show that memory stays flat and the analysis keeps up: 3 nodes, 100 000
# chunks, 16 chunk servers, about 2000 client ops per second (RATE
# scheduled ops a second; renewals and plan-ending releases come on top),
# no faults unless NEMESIS is set. While it runs it prints, every INTERVAL
# seconds, the resident memory (VmRSS) of the harness and of each node,
# and the harness's phase (run: nodes up; analysis: nodes stopped, the
# harness checking and writing its report). At the end it prints the
# verdict, the harness's own timing (results.json "timing"), the peak
# memory of the harness and of the nodes, and the size of every file in
# the run's store directory.
#
# Usage: scripts/soak.sh MINUTES
# Environment (all optional): RATE (default 1650), CHUNKS (100000),
# SERVERS (16), NODES (3), CONCURRENCY (10n), LATENCY (0, ms), LEASE_MS
# (1000), NEMESIS ("" = none), SEED (default random, printed), INTERVAL
# (5, seconds between lines), STORE (store/soak), and MAELSTROM and
# LEASE_NODE to use prebuilt binaries instead of building them.
# The exit status is the harness's (0 valid).
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=${1:?usage: scripts/soak.sh MINUTES}
case $minutes in
  '' | *[!0-9]*) echo "soak: MINUTES must be a whole number, got '$minutes'" >&2; exit 254 ;;
esac
rate=${RATE:-1650} chunks=${CHUNKS:-100000} servers=${SERVERS:-16} nodes=${NODES:-3}
concurrency=${CONCURRENCY:-10n} latency=${LATENCY:-0} lease_ms=${LEASE_MS:-1000}
interval=${INTERVAL:-5} store=${STORE:-store/soak}
seed=${SEED:-$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')}

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
maelstrom=${MAELSTROM:-}
lease_node=${LEASE_NODE:-}
if [ -z "$maelstrom" ]; then
  go build -o "$bin/maelstrom" ./maelstrom/cmd/maelstrom
  maelstrom=$bin/maelstrom
fi
if [ -z "$lease_node" ]; then
  go build -o "$bin/lease-node" .
  lease_node=$bin/lease-node
fi

args=(test -w lease --bin "$lease_node" --node-count "$nodes" --concurrency "$concurrency"
  --rate "$rate" --time-limit $((minutes * 60)) --chunks "$chunks" --servers "$servers"
  --latency "$latency" --lease-ms "$lease_ms" --seed "$seed" --store "$store")
if [ -n "${NEMESIS:-}" ]; then
  args+=(--nemesis "$NEMESIS")
fi
mkdir -p "$store"
log=$store/soak-$seed.log
echo "soak: ${minutes} min, seed $seed (replay: SEED=$seed scripts/soak.sh $minutes); harness output in $log"
echo "soak: maelstrom ${args[*]}"

# kib PID FIELD prints a /proc status field (VmRSS, VmHWM) in KiB, or 0.
kib() { awk -v f="$2:" '$1 == f { v = $2 } END { print v + 0 }' "/proc/$1/status" 2>/dev/null || true; }
mib() { echo $((($1 + 512) / 1024)); }

"$maelstrom" "${args[@]}" >"$log" 2>&1 &
harness=$!
start=$(date +%s)
peak_harness=0 peak_node=0 ran="" run_end="" printed=-1000
first_h="" last_h="" first_n="" last_n=""
printf '%6s  %-8s  %12s  %s\n' "t(s)" phase "harness MiB" "nodes MiB (pid)"
# Sample every second (to time the phases), print every INTERVAL seconds
# and at each change of phase.
while kill -0 "$harness" 2>/dev/null; do
  now=$(($(date +%s) - start))
  h=$(kib "$harness" VmRSS) hwm=$(kib "$harness" VmHWM)
  peak_harness=$((hwm > peak_harness ? hwm : peak_harness))
  line=""
  children=$(pgrep -P "$harness" || true)
  for pid in $children; do
    rss=$(kib "$pid" VmRSS) hwm=$(kib "$pid" VmHWM)
    peak_node=$((hwm > peak_node ? hwm : peak_node))
    line+=" $(mib "$rss")($pid)"
  done
  phase=start
  if [ -n "$children" ]; then
    phase=run ran=yes
  elif [ -n "$ran" ]; then
    phase=analysis
  fi
  if [ "$phase" = run ]; then
    # the curve: from the first minute on (startup and the generator's
    # table allocated), to the last sample of the run
    if [ "$now" -ge 60 ] && [ -z "$first_h" ]; then
      first_h=$(mib "$h") first_n=$line
    fi
    last_h=$(mib "$h") last_n=$line
  fi
  if [ "$phase" = analysis ] && [ -z "$run_end" ]; then
    run_end=$now printed=-1000
  fi
  if [ $((now - printed)) -ge "$interval" ]; then
    printf '%6d  %-8s  %12d  %s\n' "$now" "$phase" "$(mib "$h")" "${line:- -}"
    printed=$now
  fi
  sleep 1
done
status=0
wait "$harness" || status=$?
total=$(($(date +%s) - start))
echo "soak: harness exited $status after ${total} s; nodes stopped at ${run_end:-?} s (seen from outside, to the second)"
grep -A 10 -E '^(Everything looks good|Analysis invalid|Validity unknown|The run failed)' "$log" || tail -n 10 "$log"
dir=$(readlink -f "$store/latest")
if [ -f "$dir/results.json" ]; then
  if command -v jq >/dev/null; then
    echo "timing (results.json): $(jq -c '.timing // "none"' "$dir/results.json")"
    echo "verdict: valid=$(jq '.valid' "$dir/results.json")"
  fi
  echo "peak RSS (VmHWM, last seen): harness $(mib "$peak_harness") MiB, largest node $(mib "$peak_node") MiB"
  if command -v jq >/dev/null; then
    echo "peak RSS (results.json, getrusage): $(jq -c '.memory // "none"' "$dir/results.json")"
  fi
  if [ -n "$first_h" ]; then
    echo "run memory from 60 s to the end of the run: harness ${first_h} -> ${last_h} MiB; nodes MiB (pid):${first_n} ->${last_n}"
  fi
  echo "store $dir:"
  du -ab "$dir" | sort -k2 | awk '{ printf "  %12d  %s\n", $1, $2 }'
fi
exit "$status"
