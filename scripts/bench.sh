#!/usr/bin/env bash
# The lease benchmark (a benchmark, not a test: it never runs the test
# suite). Each op type alone and uncontended, as etcd's `benchmark` runs one
# request type at a time: grants on free chunks, renews by the holder,
# checks of held chunks, releases by token; at 1 and at 16 concurrent
# clients; plus one mixed run (16 clients, each chunk granted, renewed,
# checked and released in turn). Every run: 3 nodes, zero latency, no
# faults, 2000 measured ops over 1000 chunks (-w lease-bench; warm-up and
# reset ops are not measured, see workloads/leasebench). Prints ONE
# Markdown table: ok ops per second over the measured phases and p50, p90,
# p99 and max latency per op type, computed from each run's history.
#
# A run that is not valid, or that did not finish its measured ops within
# the time limit, stops the script with a non-zero status and the tail of
# the run's log: figures from a broken run are not figures.
#
# Usage: scripts/bench.sh [time limit per run in seconds, default 8]
# Runs end at their time limit (the harness has no "workload done" exit),
# so the whole script takes about 9 x that. Runs are kept in store/bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-8}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/maelstrom" ./maelstrom/cmd/maelstrom
go build -o "$bin/lease-node" .
go build -o "$bin/benchreport" ./scripts/benchreport

runs=()
# bench OP CLIENTS: one lease-bench run; stops the script if it fails.
bench() {
  local op=$1 clients=$2 store="store/bench/$1-$2" status=0
  mkdir -p "$store"
  echo "bench: $op, $clients clients ..." >&2
  "$bin/maelstrom" test -w lease-bench --bench-op "$op" --ops 2000 --chunks 1000 \
    --concurrency "$clients" --node-count 3 --latency 0 --lease-ms 60000 \
    --time-limit "$secs" --seed 1 --bin "$bin/lease-node" --store "$store" \
    >"$store/run.log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    echo "bench: the $op run with $clients clients exited $status (0 = valid); the end of its log ($store/run.log):" >&2
    tail -n 20 "$store/run.log" >&2
    exit "$status"
  fi
  runs+=("$store/latest")
}

for op in grant renew check release; do
  for clients in 1 16; do
    bench "$op" "$clients"
  done
done
bench mixed 16
"$bin/benchreport" table "${runs[@]}"
