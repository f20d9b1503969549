#!/usr/bin/env bash
# The real-network job: build the node and the harness into bin/, prepare
# the machine (scripts/setup_netns.sh), then run the lease workload on 5
# nodes, each `lease-node serve` in its own Linux network namespace, under
# every fault by the kernel (partitions as nftables drops, kills, pauses,
# packet faults), and print the verdict and where the report is. Extra
# arguments go to `maelstrom test` (e.g. --time-limit 60 --seed 42).
# Needs root.
#
# Exit status, the harness's own (as Maelstrom's):
#   0    the history is valid
#   1    the checker found a violation (two primaries, a wrong read, ...)
#   2    validity unknown (the checker could not judge)
#   254  bad arguments (the harness rejected a flag)
#   255  the run could not happen: not root, a build failed, a node crashed
#        or never became ready
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "netns_job: the real network needs root (network namespaces, nftables): run it as root, e.g. sudo scripts/netns_job.sh" >&2
  exit 255
fi
scripts/setup_netns.sh || exit 255
mkdir -p bin
for target in "bin/lease-node ." "bin/maelstrom ./maelstrom/cmd/maelstrom"; do
  read -r out pkg <<<"$target"
  if ! go build -o "$out" "$pkg"; then
    echo "netns_job: building $out failed (go build -o $out $pkg); no run took place" >&2
    exit 255
  fi
done
exec bin/maelstrom test -w lease --bin bin/lease-node --network netns --node-count 5 --time-limit 30 \
  --rate 50 --concurrency 10 --nemesis partition,kill,pause,packet --nemesis-interval 3 --lease-ms 1000 "$@"
