#!/usr/bin/env bash
# The real network's acceptance runs: for each seed, the lease workload on
# 5 nodes for 60 s under every fault (--nemesis partition,kill,pause,packet,
# --nemesis-interval 3), leases of 250 ms to 1 s (--lease-ms 1000: each
# grant and renew asks for a length drawn from [lease-ms/4, lease-ms]),
# first on the real network (--network netns: every node `lease-node serve`
# in its own network namespace, faults by the kernel), then with the same
# seed, so the same schedule of faults, on the simulated network.
#
#   scripts/netns_acceptance.sh [SEED ...]     (default: seeds 1 to 10)
#
# Every run must be valid (exit 0) with no split brain (two-primaries) and
# no token violation, and after every real-network run nothing may be left
# (no namespace of the run, no node process, the root namespace's rules and
# qdiscs unchanged). It prints a table a row per run (ok fraction overall,
# inside and outside faults; failover median overall, inside and outside
# faults; messages per op where the network counts them; analysis time),
# also written to store/acceptance-netns/table.md, and exits 1 if any check
# failed. Needs root. About 2.5 minutes per seed on 2 cores.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup_netns.sh || exit 1 # not root: it says so
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3 4 5 6 7 8 9 10)

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
store=store/acceptance-netns
rm -rf "$store" && mkdir -p "$store"
go build -o "$bin/maelstrom" ./maelstrom/cmd/maelstrom && go build -o "$bin/lease-node" . || exit 1
root_before=$(nft list ruleset; tc qdisc)
table="$store/table.md"
{
  echo "| seed | network | exit | split brain / token violations | ok fraction: all, in faults, outside | failover p50 ms: all, in faults, outside | msgs per op | analysis s | left behind |"
  echo "|---|---|---|---|---|---|---|---|---|"
} >"$table"
failed=0

# leftovers PID: what a real-network run of harness PID left behind.
leftovers() {
  local left="" cmdline
  left+=$(ip netns list | grep -F "chunklease-$1-" | tr '\n' ' ')
  for cmdline in /proc/[0-9]*/cmdline; do
    if { tr '\0' ' ' <"$cmdline"; } 2>/dev/null | grep -q "^$bin/lease-node "; then left+="process $cmdline "; fi
  done
  [ "$(nft list ruleset; tc qdisc)" = "$root_before" ] || left+="root rules or qdiscs changed"
  echo "${left:-nothing}"
}

# row SEED NETWORK EXIT LEFT: the table's row of a run.
row() {
  python3 - "$store/$2-$1/latest" "$1" "$2" "$3" "$4" <<'EOF'
import json, sys
d, seed, net, code, left = sys.argv[1:]
r = json.load(open(d + "/results.json"))
ws, lease = r.get("workload_stats") or {}, r.get("lease") or {}
kinds = lease.get("violations_by_kind") or {}
split = kinds.get("two-primaries", 0)
tokens = sum(v for k, v in kinds.items() if k.startswith("token-"))
a = ws.get("availability", {})
frac = lambda k: "%.3f" % a[k]["all"]["fraction"] if k in a else "-"
fo = lambda k: "%.0f" % ws[k]["median_ms"] if ws.get(k, {}).get("count") else "-"
mpo = ws.get("messages_per_op")
print("| %s | %s | %s | %d / %d | %s, %s, %s | %s, %s, %s | %s | %.2f | %s |" % (
    seed, net, code, split, tokens, frac("overall"), frac("inside_faults"), frac("outside_faults"),
    fo("failover"), fo("failover_inside_faults"), fo("failover_outside_faults"),
    "%.1f" % mpo if mpo is not None else "not counted", r["timing"]["analysis_s"], left))
if code != "0" or split or tokens or (left != "nothing" and net == "netns"):
    sys.exit(1)
EOF
}

for seed in "${seeds[@]}"; do
  for net in netns sim; do
    printf -- '--- seed %s, %s network\n' "$seed" "$net"
    "$bin/maelstrom" test -w lease --bin "$bin/lease-node" --network "$net" --node-count 5 --time-limit 60 \
      --rate 50 --concurrency 10 --nemesis partition,kill,pause,packet --nemesis-interval 3 --lease-ms 1000 \
      --seed "$seed" --store "$store/$net-$seed" >"$store/$net-$seed.log" 2>&1 &
    pid=$!
    wait "$pid"
    code=$?
    tail -n 7 "$store/$net-$seed.log"
    left="n/a"
    [ "$net" = sim ] || left=$(leftovers "$pid")
    if ! row "$seed" "$net" "$code" "$left" >>"$table"; then
      failed=1
      echo "FAILED: seed $seed on the $net network (exit $code, left behind: $left)" >&2
    fi
    tail -n 1 "$table"
  done
done
echo
cat "$table"
uptime
[ "$failed" -eq 0 ] && echo "netns_acceptance: every run valid, no split brain, no token violation, nothing left behind" && exit 0
echo "netns_acceptance: some runs failed (above)" >&2
exit 1
