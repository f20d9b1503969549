#!/usr/bin/env bash
# The main job: build the node and the harness into bin/, then run the lease
# workload on 5 nodes under network partitions (Jepsen's partition nemesis)
# and print the verdict and where the report is. Extra arguments go to
# `maelstrom test` (e.g. --time-limit 60 --seed 42).
#
# Exit status, the harness's own (as Maelstrom's):
#   0    the history is valid
#   1    the checker found a violation (two primaries, a wrong read, ...)
#   2    validity unknown (the checker could not judge)
#   254  bad arguments (the harness rejected a flag)
#   255  the run could not happen: a build failed, a node crashed or
#        never answered init
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
for target in "bin/lease-node ." "bin/maelstrom ./maelstrom/cmd/maelstrom"; do
  read -r out pkg <<<"$target"
  if ! go build -o "$out" "$pkg"; then
    echo "main_job: building $out failed (go build -o $out $pkg); no run took place" >&2
    exit 255
  fi
done
exec bin/maelstrom test -w lease --bin bin/lease-node --node-count 5 --time-limit 30 --rate 50 \
  --latency 10 --nemesis partition --nemesis-interval 2 --lease-ms 1000 "$@"
