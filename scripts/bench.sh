#!/usr/bin/env bash
# Throughput and latency of the node under the harness (a benchmark, not a
# test): 3 nodes, no faults, 16 workers, a rate high enough to saturate the
# nodes, first with zero latency, then with 10 ms constant one-way latency.
# 16 chunk servers contend for 200 chunks. Prints ok ops per second and
# p50/p99 latencies of grants, renews, checks and releases per run.
# A run that is not valid stops the script with its harness status and log:
# figures from a broken run are not figures.
# Usage: scripts/bench.sh [seconds per run, default 20]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/maelstrom" ./maelstrom/cmd/maelstrom
go build -o "$bin/lease-node" .
go build -o "$bin/benchreport" ./scripts/benchreport

for latency in 0 10; do
  store="store/bench/latency-$latency"
  mkdir -p "$store"
  status=0
  "$bin/maelstrom" test -w lease --bin "$bin/lease-node" --node-count 3 --concurrency 16 \
    --rate 100000 --time-limit "$secs" --latency "$latency" --lease-ms 2000 --servers 16 --chunks 200 \
    --store "$store" >"$store/run.log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    echo "bench: the run at ${latency} ms latency exited $status (0 = valid); its output ($store/run.log):" >&2
    tail -n 20 "$store/run.log" >&2
    exit "$status"
  fi
  echo "latency ${latency} ms (one way), ${secs} s, 3 nodes, 16 workers:"
  "$bin/benchreport" "$store/latest"
done
