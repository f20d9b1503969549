#!/usr/bin/env bash
# The abuse check (docs/service.md, "Connections"; a benchmark, with a
# short form in scripts/run_tests.sh): a 3-member cluster on loopback
# (scripts/cluster.sh), and against its first member at once, each from
# its own loopback address: slowloris connections (a request head a byte
# a second), a greedy client's keep-alive connections sending grants as
# fast as they are answered, and silent connects; meanwhile a
# well-behaved client makes calls, each on a new connection
# (scripts/abusecheck). Bounded: the attacks stop when the client is
# done, every process this script started is stopped, nothing leaves
# loopback.
#
#   scripts/abuse_check.sh            the full form: 2 000 slowloris, 2 000 greedy,
#                                     1 000 connects a second, 200 calls; goals
#                                     ok >= 190 and p99 < 1000 ms (an idle machine)
#   scripts/abuse_check.sh --short    500, 500, 250 a second, 50 calls; goals
#                                     ok >= 48 and no reset (p99 reported only)
#
# The last line is exactly
#   abuse: well-behaved ok=N/CALLS p99_ms=X greedy-503=N resets-to-well-behaved=N
# Exit status: 0 the goals are met, 1 missed (or the cluster failed), 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  "") args=(-slowloris 2000 -greedy 2000 -churn 1000 -calls 200 -min-ok 190 -max-p99-ms 1000) ;;
  --short) args=(-slowloris 500 -greedy 500 -churn 250 -calls 50 -min-ok 48 -max-p99-ms 0 -warmup 2s) ;;
  *) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac

# Descriptors: the attacker holds about 5 000 connections at once, and
# each member up to its -max-client-conns plus its overload answers.
want=16384
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt "$want" ]; then want=$hard; fi
ulimit -n "$want"
if [ "$(ulimit -n)" -lt 8192 ]; then
  echo "abuse_check: ulimit -n is $(ulimit -n) (hard limit $hard); the attack needs 8192 descriptors: raise the hard limit" >&2
  exit 1
fi

work=$(mktemp -d)
export CLUSTER_STATE_DIR=$work/cluster
cleanup() { scripts/cluster.sh down >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
go build -o "$work/abusecheck" ./scripts/abusecheck
# Each member gets its share of the 2 cores, as docs/service.md advises.
out=$(GOMAXPROCS=${GOMAXPROCS:-1} scripts/cluster.sh up 3 -max-lease-ms 5000) || { echo "$out"; exit 1; }
endpoints=${out##*ENDPOINTS=}
target=${endpoints%%,*}
echo "abuse_check: members ${endpoints}; attacking ${target} (ulimit -n $(ulimit -n); load $(cut -d' ' -f1-3 /proc/loadavg))"
status=0
timeout 300 "$work/abusecheck" -target "$target" "${args[@]}" || status=$?
exit "$status"
