#!/usr/bin/env bash
# The real network's acceptance runs: for each seed, the lease workload on
# 5 nodes for 60 s under every fault (--nemesis
# partition,kill,pause,packet,clock --nemesis-interval 3, on a node built
# with -tags clockfault so that it follows the clock nemesis), leases of
# 250 ms to 1 s (--lease-ms 1000: each grant and renew asks for a length
# drawn from [lease-ms/4, lease-ms]), first on the real network (--network
# netns: every node `lease-node serve` in its own network namespace, faults
# by the kernel), then with the same seed, so the same schedule of faults,
# on the simulated network.
#
#   scripts/netns_acceptance.sh [SEED ...]     (default: seeds 1 to 10)
#
# Every run must be valid (exit 0) with no split brain (two-primaries) and
# no token violation; every fault must have been applied (partitions,
# kills, pauses, packet faults, clock skews with their settings, within
# the nodes' drift bound) and every node must have followed its clock file;
# after every real-network run nothing may be left (no namespace of the
# run, no node process, the root namespace's rules and qdiscs unchanged).
# It prints a table a row per run (ok fraction overall, inside and outside
# faults; failover median overall, inside and outside faults; messages
# between nodes per op where the network counts them, TCP segments per op
# on the real network; faults applied; analysis time; the machine's load),
# also written to store/acceptance-netns/table.md, and exits 1 if any
# check failed. Needs root. About 2.5 to 3 minutes per seed on 2 cores.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup_netns.sh || exit 1 # not root: it says so
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3 4 5 6 7 8 9 10)

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
store=store/acceptance-netns
rm -rf "$store" && mkdir -p "$store"
go build -o "$bin/maelstrom" ./maelstrom/cmd/maelstrom && go build -tags clockfault -o "$bin/lease-node" . || exit 1
root_before=$(nft list ruleset; tc qdisc)
uptime
table="$store/table.md"
{
  echo "| seed | network | exit | split brain / token violations | ok fraction: all, in faults, outside | failover p50 ms: all, in faults, outside | msgs per op | faults: partitions, nodes killed, nodes paused, packet, clock skews | analysis s | load (1 min) | left behind |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
} >"$table"
failed=0

# leftovers PID: what a real-network run of harness PID left behind.
leftovers() {
  local left="" cmdline
  left+=$(ip netns list | grep -F "chunklease-$1-" | tr '\n' ' ')
  for cmdline in /proc/[0-9]*/cmdline; do
    if { tr '\0' ' ' <"$cmdline"; } 2>/dev/null | grep "^$bin/lease-node " >/dev/null; then left+="process $cmdline "; fi
  done
  [ "$(nft list ruleset; tc qdisc)" = "$root_before" ] || left+="root rules or qdiscs changed"
  echo "${left:-nothing}"
}

# row SEED NETWORK EXIT LEFT: the table's row of a run; exits 1 when the
# run breaks a requirement (and says which on stderr).
row() {
  python3 - "$store/$2-$1/latest" "$1" "$2" "$3" "$4" "$(cut -d' ' -f1 /proc/loadavg)" <<'EOF'
import glob, json, sys
d, seed, net, code, left, load = sys.argv[1:]
r = json.load(open(d + "/results.json"))
nem = [op for op in map(json.loads, open(d + "/history.jsonl")) if op["process"] == "nemesis"]
ws, lease = r.get("workload_stats") or {}, r.get("lease") or {}
kinds = lease.get("violations_by_kind") or {}
split = kinds.get("two-primaries", 0)
tokens = sum(v for k, v in kinds.items() if k.startswith("token-"))
a = ws.get("availability", {})
frac = lambda k: "%.3f" % a[k]["all"]["fraction"] if k in a else "-"
fo = lambda k: "%.0f" % ws[k]["median_ms"] if ws.get(k, {}).get("count") else "-"
mpo = ((r.get("net") or {}).get("servers") or {}).get("msgs_per_op")
if mpo is not None:
    msgs = "%.1f" % mpo
else:  # the real network: no message count, the kernel's TCP segments
    ops = (r.get("stats") or {}).get("count") or 1
    segs = sum(n["tcp"]["OutSegs"] for n in (r.get("network_observed") or {}).get("nodes", {}).values())
    msgs = "not counted (%.1f TCP segments)" % (segs / ops)
n = r.get("nemesis") or {}
periods = n.get("periods") or {}
faults = [periods.get("partition", 0), n.get("nodes_killed", 0), n.get("nodes_paused", 0),
          periods.get("packet", 0), (n.get("ops") or {}).get("clock-skew", 0)]
print("| %s | %s | %s | %d / %d | %s, %s, %s | %s, %s, %s | %s | %s | %.2f | %s | %s |" % (
    seed, net, code, split, tokens, frac("overall"), frac("inside_faults"), frac("outside_faults"),
    fo("failover"), fo("failover_inside_faults"), fo("failover_outside_faults"), msgs,
    ", ".join(map(str, faults)), r["timing"]["analysis_s"], load, left))
broken = []
if code != "0": broken.append("exit %s" % code)
if split or tokens: broken.append("split brain or token violations")
if left != "nothing" and net == "netns": broken.append("left behind: " + left)
if not all(faults): broken.append("a fault never applied")
clk = (r.get("nemesis") or {}).get("clock") or {}
skews = [c for op in nem if op["f"] == "clock-skew" for c in op["value"].values()]
if not clk.get("within_bound") or any(abs(c["rate"] - 1) > 0.001 + 1e-9 or abs(c["offset_ms"]) > 250 for c in skews):
    broken.append("clock skews beyond the nodes' bounds")
logs = glob.glob(d + "/node-logs/*.log")
if len(logs) != 5 or not all("clockfault build: following " in open(f).read() for f in logs):
    broken.append("a node did not follow its clock file")
for b in broken:
    print("seed %s, %s network: %s" % (seed, net, b), file=sys.stderr)
sys.exit(1 if broken else 0)
EOF
}

for seed in "${seeds[@]}"; do
  for net in netns sim; do
    printf -- '--- seed %s, %s network\n' "$seed" "$net"
    "$bin/maelstrom" test -w lease --bin "$bin/lease-node" --network "$net" --node-count 5 --time-limit 60 \
      --rate 50 --concurrency 10 --nemesis partition,kill,pause,packet,clock --nemesis-interval 3 --lease-ms 1000 \
      --seed "$seed" --store "$store/$net-$seed" >"$store/$net-$seed.log" 2>&1 &
    pid=$!
    wait "$pid"
    code=$?
    tail -n 8 "$store/$net-$seed.log"
    left="n/a"
    [ "$net" = sim ] || left=$(leftovers "$pid")
    if ! row "$seed" "$net" "$code" "$left" >>"$table"; then
      failed=1
      echo "FAILED: seed $seed on the $net network (exit $code, left behind: $left); its store: $store/$net-$seed" >&2
    fi
    tail -n 1 "$table"
  done
done
echo
cat "$table"
uptime
[ "$failed" -eq 0 ] && echo "netns_acceptance: every run valid, every fault applied, no split brain, no token violation, nothing left behind" && exit 0
echo "netns_acceptance: some runs failed (above)" >&2
exit 1
