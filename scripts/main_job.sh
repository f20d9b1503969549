#!/usr/bin/env bash
# The main job: build the node and the harness into bin/, then run the lease
# workload on 5 nodes under network partitions (Jepsen's partition nemesis)
# and print the verdict and where the report is. Extra arguments go to
# `maelstrom test` (e.g. --time-limit 60 --seed 42). Exit status: 0 valid,
# 1 the checker found two primaries or a wrong read, 2 the run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
go build -o bin/lease-node .
go build -o bin/maelstrom ./maelstrom/cmd/maelstrom
exec bin/maelstrom test -w lease --bin bin/lease-node --node-count 5 --time-limit 30 --rate 50 \
  --latency 10 --nemesis partition --nemesis-interval 2 --lease-ms 1000 "$@"
