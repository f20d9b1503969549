#!/usr/bin/env bash
# The real-network job: scripts/main_job.sh (build the node and the harness
# into bin/, run the lease workload on 5 nodes, print the verdict and where
# the report is) on the real network: every node `lease-node serve` in its
# own Linux network namespace, under every fault by the kernel (partitions
# as nftables drops, kills, pauses, packet faults). Prepares the machine
# first (scripts/setup_netns.sh). Extra arguments go to `maelstrom test`
# (e.g. --time-limit 60 --seed 42). Needs root.
#
# Exit status: main_job.sh's (the harness's: 0 valid, 1 invalid, 2 unknown,
# 254 bad arguments, 255 the run could not happen); 255 without root.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup_netns.sh || exit 255 # not root: it says so
# Later flags win: main_job's simulated latency and partition-only nemesis
# give way to every fault on the real network's own wire.
exec scripts/main_job.sh --network netns --latency 0 --concurrency 10 \
  --nemesis partition,kill,pause,packet --nemesis-interval 3 "$@"
