#!/usr/bin/env bash
# Replaces a dead member without an outage (docs/service.md, "Replacing a
# member"): on a 3-member cluster from scripts/cluster.sh with membership
# on and 2 s leases, 8 client Sessions hold leases on 8 chunks through the
# members; n3 is killed for good (SIGKILL); `leasectl member remove n3`;
# a brand-new node n4 is started as the docs say (scripts/cluster.sh join
# n4: -join on, no boot wait); `leasectl member add n4 -addr PEER -wait`
# (it waits out the waiting rule, one longest lease); then a grant through
# n4 must succeed. The Sessions must keep every lease throughout (no
# Done before the end) with tokens strictly increasing at each renewal.
# Last line:
#   member: replaced n3 by n4 in S s; sessions=8 lost=0 token-inversions=0 n4-serves=yes
# where S is the time from the kill to the add's answer. Exit 0 when all
# of that held, 1 otherwise. Loopback only; about 20 s plus the builds;
# everything it starts is stopped (by PID) and its state removed, also on
# failure or interrupt.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
export CLUSTER_STATE_DIR=$work/cluster
helper=""
cleanup() {
  if [ -n "$helper" ] && kill -0 "$helper" 2>/dev/null; then kill -TERM "$helper" 2>/dev/null || true; wait "$helper" 2>/dev/null || true; fi
  scripts/cluster.sh down >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
die() { echo "member_check: $*" >&2; exit 1; }

go build -o "$work/leasectl" ./cmd/leasectl
go build -o "$work/membercheck" ./scripts/membercheck
out=$(scripts/cluster.sh up 3 -membership on -max-lease-ms 2000) || { echo "$out" >&2; die "scripts/cluster.sh up failed"; }
export LEASE_ENDPOINTS=${out##*ENDPOINTS=}
# Each member runs -loops event loops (LEASE_LOOPS, default GOMAXPROCS):
# membership changes on members of several cores (lease/doc.go
# "Membership and cores") whenever the machine has more than one.
echo "member_check: $(grep -ho '[0-9]* loops' "$CLUSTER_STATE_DIR"/n*.log | sort | uniq -c | awk '{print $1 " members of " $2 " loops"}' | paste -sd, -)"
leasectl() { "$work/leasectl" "$@"; }

# The Sessions, in the background; their stats come at SIGTERM.
"$work/membercheck" -endpoints "$LEASE_ENDPOINTS" -chunks 8 -lease-ms 2000 -limit 120s >"$work/sessions.out" 2>"$work/sessions.err" &
helper=$!
for _ in $(seq 1 200); do
  grep -q "sessions up" "$work/sessions.out" 2>/dev/null && break
  kill -0 "$helper" 2>/dev/null || { cat "$work/sessions.err" >&2; die "the Sessions did not start"; }
  sleep 0.1
done
grep -q "sessions up" "$work/sessions.out" || die "the Sessions did not start within 20 s"
echo "member_check: 8 Sessions hold their leases; $(leasectl member list)"
sleep 2

# n3 dies for good.
n3=$(awk '$1 == "n3" {print $2}' "$CLUSTER_STATE_DIR/pids")
[ -n "$n3" ] || die "no pid for n3"
started=$(date +%s.%N)
kill -KILL "$n3"
echo "member_check: killed n3 (pid $n3)"
leasectl -timeout 30s member remove n3 -wait || die "member remove n3 failed"
joined=$(scripts/cluster.sh join n4) || { echo "$joined" >&2; die "scripts/cluster.sh join n4 failed"; }
peer=$(sed -n 's/^PEER=//p' <<<"$joined")
n4url=$(sed -n 's/^ENDPOINT=//p' <<<"$joined")
leasectl -timeout 30s member add n4 -addr "$peer" -wait || die "member add n4 failed"
done_at=$(date +%s.%N)
seconds=$(awk -v a="$started" -v b="$done_at" 'BEGIN { printf "%.1f", b - a }')
echo "member_check: $(leasectl member list)"

# n4 serves: a grant through n4 alone succeeds (retried while it learns
# the configuration and becomes ready).
serves=no
for _ in $(seq 1 50); do
  if leasectl -endpoints "$n4url" -timeout 2s grant member_check_n4 cs_n4 >"$work/n4.out" 2>&1; then serves=yes; break; fi
  sleep 0.2
done
cat "$work/n4.out"
sleep 2 # the Sessions renew through the new configuration too

kill -TERM "$helper"
wait "$helper" || true
helper=""
stats=$(tail -n 1 "$work/sessions.out")
echo "member_check: sessions $stats"
read -r sessions lost inversions < <(python3 -c 'import json, sys; r = json.loads(sys.argv[1]); print(r["sessions"], r["lost"], r["token_inversions"])' "$stats")
echo "member: replaced n3 by n4 in $seconds s; sessions=$sessions lost=$lost token-inversions=$inversions n4-serves=$serves"
[ "$sessions" = 8 ] && [ "$lost" = 0 ] && [ "$inversions" = 0 ] && [ "$serves" = yes ]
