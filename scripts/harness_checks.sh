#!/usr/bin/env bash
# Runs the node under the project's Maelstrom-compatible harness and checks
# each verdict: the echo workload, the lease workload without faults and
# under partitions (valid), and the negative control LEASE_ACCEPTORS=self
# (each node its own acceptor), which the lease checker must reject.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
# The runs stay in store/checks/ (ignored by git), so the report paths
# printed below stay valid after the script ends.
store=store/checks
rm -rf "$store" && mkdir -p "$store"
go build -o "$bin/maelstrom" ./maelstrom/cmd/maelstrom
go build -o "$bin/lease-node" .

# expect STATUS NAME ARGS...: run the harness and require exit STATUS.
expect() {
  local want=$1 name=$2; shift 2
  printf -- '--- %s\n' "$name"
  set +e
  "$bin/maelstrom" test --bin "$bin/lease-node" --store "$store/$name" "$@" > "$store/$name.log" 2>&1
  local got=$?
  set -e
  tail -n 4 "$store/$name.log"
  if [ "$got" -ne "$want" ]; then
    echo "harness check '$name' exited $got, want $want; its output:" >&2
    cat "$store/$name.log" >&2
    exit 1
  fi
  printf 'ok: %s exited %d as expected\n' "$name" "$got"
}

expect 0 echo -w echo --node-count 1 --time-limit 5 --rate 50
expect 0 lease-3-nodes -w lease --node-count 3 --time-limit 10 --rate 50
expect 0 lease-5-nodes-partitions -w lease --node-count 5 --time-limit 30 --rate 50 --latency 10 \
  --nemesis partition --nemesis-interval 2 --lease-ms 1000
# ... and the majority side kept granting while partitions were in force.
in_partitions=$(grep -o '"holdings_in_partitions": *[0-9]*' \
  "$store/lease-5-nodes-partitions/latest/results.json" | grep -o '[0-9]*$')
echo "holdings that began inside partitions: ${in_partitions:-none}"
[ "${in_partitions:-0}" -gt 0 ] || { echo "no lease was granted during partitions" >&2; exit 1; }
LEASE_ACCEPTORS=self expect 1 negative-control-acceptors-self -w lease --node-count 3 --time-limit 20 \
  --rate 50 --nemesis partition --nemesis-interval 2
