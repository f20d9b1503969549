#!/usr/bin/env bash
# The lease service against etcd on the same machine, over the same
# loopback (a benchmark, not a test: it never runs the test suite).
#
#   scripts/bench_net.sh [PART [FLAGS...]]...     PART: table, failover, memory
#                                                 (default: all three, in that order)
#
# table     the per-op table of scripts/bench.sh (grant, renew, check,
#           release, mixed; 1, 16 and 64 clients; 2000 measured ops each)
#           through the Go client package against 3 `lease-node serve`
#           members with peer TLS (scripts/cluster.sh), and the same ops
#           against etcd 3.4 (Debian's etcd-server, 3 members) through
#           go.etcd.io/etcd/client/v3, once with --unsafe-no-fsync (the fair
#           diskless comparison) and once with fsync, in alternating runs;
#           then both tables, the ratios ours / etcd per row and a PASS or
#           MISS line per goal. About 2 minutes.
# failover  SIGKILL the member a Session renews through (ours, 300 ms
#           leases) or etcd's leader, 10 times each; the time until a renewal
#           succeeds again, p50 and max. About 2 minutes.
# memory    heap and VmRSS of each member at 1 000 000 chunks: live, idle,
#           reclaimed; bytes per chunk. About 8 minutes.
#
# Every member, ours and etcd's, runs with GOMAXPROCS = its share of the
# cores (cores / 3, at least 1; `-member-cpus N` sets it, -1 leaves Go's
# default; benchnet/doc.go says why).
# FLAGS go to that part (`benchnet PART -h` lists them), e.g.
#   scripts/bench_net.sh table -rounds 3 memory -chunks 100000 -budget 30s
# BENCH_NET_QUIET=LOAD waits (at most 10 minutes) before each part until
# the 1-minute load average is below LOAD: other work on the machine
# slows both systems, not always alike. Every figure is printed with the
# load average; runs are kept in store/bench_net/<time>/ (JSON lines).
#
# The benchmark's Go program is benchnet/, a module of its own (go.mod
# there), so the etcd client is never a dependency of the node. Every
# process it starts (our members, etcd members) is stopped by PID, also
# when it fails or is interrupted; traffic goes to 127.0.0.1 only.
# Exit status: 0 measured (whatever the goals), 1 a run failed, 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

# Split the arguments into parts, each with its own flags.
declare -a order=()
declare -A flags=()
current=""
for arg in "$@"; do
  case "$arg" in
    table | failover | memory) current=$arg; order+=("$arg"); flags[$arg]="" ;;
    *)
      if [ -z "$current" ]; then
        echo "bench_net: $arg: name a part first (table, failover, memory); see the top of $0" >&2
        exit 2
      fi
      flags[$current]+=" $(printf '%q' "$arg")" ;;
  esac
done
[ ${#order[@]} -gt 0 ] || order=(table failover memory)

# etcd 3.4 from Debian's package (it starts no service here: no systemd).
if ! etcd --version 2>/dev/null | grep -q '^etcd Version: 3\.4\.'; then
  echo "bench_net: installing etcd 3.4 (Debian's etcd-server)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null
fi

work=$(mktemp -d)
pidfile=$work/pids
# cleanup: the program stops what it started, also when this script is
# interrupted (SIGTERM to it first, 10 s at most); this is the backstop
# for a program that was killed: the clusters by their scripts, then any
# PID it recorded that still runs etcd or lease-node.
bench_pid=""
cleanup() {
  local dir pid name i
  if [ -n "$bench_pid" ] && kill -0 "$bench_pid" 2>/dev/null; then
    kill -TERM "$bench_pid" 2>/dev/null || true
    for i in $(seq 100); do kill -0 "$bench_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$bench_pid" 2>/dev/null || true
  fi
  for dir in "$work"/ours*; do
    [ -d "$dir" ] && CLUSTER_STATE_DIR=$dir scripts/cluster.sh down >/dev/null 2>&1 || true
  done
  if [ -f "$pidfile" ]; then
    while read -r pid name; do
      [ -r "/proc/$pid/cmdline" ] || continue
      if tr '\0' ' ' <"/proc/$pid/cmdline" | grep -Eq '^(/usr/bin/etcd|\S*/lease-node serve) '; then
        echo "bench_net: stopping $name (pid $pid), left running" >&2
        kill -KILL "$pid" 2>/dev/null || true
      fi
    done <"$pidfile"
  fi
  rm -rf "$work"
}
trap cleanup EXIT

(cd benchnet && go build -o "$work/benchnet" .)
store=store/bench_net/$(date +%Y%m%d-%H%M%S)
mkdir -p "$store"
echo "bench_net: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/ {print $2}') GiB; $(go version | cut -d' ' -f3); $(etcd --version | head -n 1); load average $(cut -d' ' -f1-3 /proc/loadavg)"

# wait_quiet: until the 1-minute load average is below BENCH_NET_QUIET.
wait_quiet() {
  [ -n "${BENCH_NET_QUIET:-}" ] || return 0
  local deadline=$((SECONDS + 600))
  while awk -v q="$BENCH_NET_QUIET" '{exit !($1 >= q)}' /proc/loadavg; do
    if [ $SECONDS -ge $deadline ]; then
      echo "bench_net: the load average stayed at or above $BENCH_NET_QUIET for 10 minutes; measuring anyway" >&2
      return 0
    fi
    sleep 10
  done
}

for part in "${order[@]}"; do
  wait_quiet
  echo
  echo "=== bench_net $part (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  started=$SECONDS
  eval "part_flags=(${flags[$part]})"
  # In the background, so that a signal to this script ends the wait at
  # once and its cleanup stops the program.
  "$work/benchnet" "$part" -repo "$repo" -work "$work" -store "$store" -pidfile "$pidfile" "${part_flags[@]}" &
  bench_pid=$!
  wait "$bench_pid"
  bench_pid=""
  echo "bench_net: $part took $((SECONDS - started)) s; its runs are in $store/"
done
