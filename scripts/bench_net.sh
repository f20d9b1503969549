#!/usr/bin/env bash
# The lease service against etcd on the same machine (a benchmark, not a
# test: it never runs the test suite).
#
#   scripts/bench_net.sh [PART [FLAGS...]]...     PART: table, latency, openloop, failover, cores, memory
#                                                 (default: table latency openloop failover cores)
#
# The anchor is etcd 3.7: this script builds go.etcd.io/etcd/server/v3
# v3.7.3 from the Go module proxy as a main module of its own (its
# `replace` lines, which point into etcd's repository, dropped; cached in
# ${BENCH_NET_CACHE:-~/.cache/chunklease}), and installs Debian's etcd
# 3.4 (etcd-server) for a second column when the package is there.
#
# table     the per-op table (grant, renew, check, release, mixed; 1, 16
#           and 64 clients) through the Go client package against 3
#           `lease-node serve` members with peer TLS (scripts/cluster.sh),
#           and the same ops against 3 etcd members through
#           go.etcd.io/etcd/client/v3 (--unsafe-no-fsync: the diskless
#           comparison; -fsync adds etcd 3.7 as shipped); each run
#           measures 3 s after 1 s of warm-up, 3 rounds in alternating
#           order, medians and their spread. About 15 minutes.
# latency   the latency-bound benchmark: every member and the clients in
#           network namespaces of their own, 5 ms one way on every packet
#           between them (-delay-ms); renew at 1, 16 and 64 clients, ours
#           and etcd 3.7. Needs root. About 2 minutes.
# openloop  renewals at a fixed offered rate with Poisson arrivals (N
#           holders renewing on a schedule) at 25, 50 and 75 % of etcd
#           3.7's saturation rate, p50 and p99 for both. About 2 minutes.
# failover  SIGKILL the member a Session renews through (ours, 300 ms
#           leases) or etcd's leader, 10 times each; the time until a
#           renewal succeeds again, p50 and max. About 2 minutes.
# cores     one member's cores without sockets (server's
#           BenchmarkMemberCores: fake peers, 64 clients renewing or
#           checking their own chunks) at GOMAXPROCS 1 and 2 in adjacent
#           pairs, -rounds (7) of two pairs per op, -benchtime (2s) a
#           run; the goal (>= 1.7x) is the median of the pairs' ratios,
#           leaving out a pair whose run did not get its cores or whose
#           one-core run ran on a slow machine (scripts/cores_goal.awk);
#           beside it what two GOMAXPROCS=1 processes at once give (the
#           machine's own scaling for work that shares nothing). Each
#           round starts once the machine is idle (90 %, 60 s at most).
#           About 5 minutes.
# memory    heap and VmRSS of each member at 1 000 000 chunks: live, idle,
#           reclaimed; bytes per chunk. About 8 minutes; only when named.
#
# Each part prints PASS or MISS per goal, and the script prints them all
# again at the end. Every member, ours and etcd's, runs with Go's default
# GOMAXPROCS (`-member-cpus share` gives each its share of the cores, or
# `-member-cpus N`; benchnet/doc.go says why).
# FLAGS go to that part (`benchnet PART -h` lists them), e.g.
#   scripts/bench_net.sh table -rounds 5 memory -chunks 100000 -budget 30s
# BENCH_NET_QUIET=LOAD waits (at most 10 minutes) before each part until
# the 1-minute load average is below LOAD: other work on the machine
# slows both systems, not always alike. Every figure is printed with the
# load average; runs are kept in store/bench_net/<time>/ (JSON lines).
#
# The benchmark's Go program is benchnet/, a module of its own (go.mod
# there), so the etcd client is never a dependency of the node. Every
# process it starts (our members, etcd members) is stopped by PID, also
# when it fails or is interrupted; traffic goes to 127.0.0.1 and, for the
# latency part, to the namespaces it creates (removed at its end).
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
    table | latency | openloop | failover | cores | memory) current=$arg; order+=("$arg"); flags[$arg]="" ;;
    *)
      if [ -z "$current" ]; then
        echo "bench_net: $arg: name a part first (table, latency, openloop, failover, cores, memory); see the top of $0" >&2
        exit 2
      fi
      flags[$current]+=" $(printf '%q' "$arg")" ;;
  esac
done
[ ${#order[@]} -gt 0 ] || order=(table latency openloop failover cores)

# etcd 3.7.3 from the Go module proxy, built once with this Go.
etcd_version=v3.7.3
cache=${BENCH_NET_CACHE:-$HOME/.cache/chunklease}
etcd37=$cache/etcd-$etcd_version/etcd
# (grep reads all the output: with -q it could stop at the first line,
# etcd then dies of SIGPIPE, pipefail fails the test, and etcd was
# rebuilt at every run.)
if ! "$etcd37" --version 2>/dev/null | grep "^etcd Version: ${etcd_version#v}\$" >/dev/null; then
  echo "bench_net: building etcd $etcd_version (go.etcd.io/etcd/server/v3 from the module proxy, its replace lines dropped)" >&2
  build=$(mktemp -d)
  # From the empty build directory: no module of ours is touched.
  src=$(cd "$build" && go mod download -json "go.etcd.io/etcd/server/v3@$etcd_version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -d "$src" ] || { echo "bench_net: the module proxy gave no go.etcd.io/etcd/server/v3@$etcd_version" >&2; exit 1; }
  cp -r "$src/." "$build/"
  chmod -R u+w "$build"
  # Its replace lines point into etcd's repository (../api, ...), which a
  # module download does not hold; the toolchain line would fetch a newer Go.
  sed -i '/^replace (/,/^)/d; /^replace /d; /^toolchain /d' "$build/go.mod"
  mkdir -p "$(dirname "$etcd37")"
  (cd "$build" && GOTOOLCHAIN=local GOFLAGS=-mod=mod go build -trimpath -o "$etcd37.new" .)
  mv "$etcd37.new" "$etcd37"
  rm -rf "$build"
fi

# etcd 3.4 from Debian's package, for the second column (it starts no
# service here: no systemd). Without it the tables have no 3.4 column.
etcd34=/usr/bin/etcd
if ! "$etcd34" --version 2>/dev/null | grep '^etcd Version: 3\.4\.' >/dev/null; then
  echo "bench_net: installing etcd 3.4 (Debian's etcd-server) for the second column" >&2
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null; }; then
    echo "bench_net: etcd-server could not be installed: no etcd 3.4 column" >&2
    etcd34=""
  fi
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
      if tr '\0' ' ' <"/proc/$pid/cmdline" | grep -E '^(\S*/etcd|\S*/lease-node serve) ' >/dev/null; then
        echo "bench_net: stopping $name (pid $pid), left running" >&2
        kill -KILL "$pid" 2>/dev/null || true
      fi
    done <"$pidfile"
  fi
  # The members' logs outlive a failed run (an error names them).
  if [ "$status" -ne 0 ] && [ -n "${store:-}" ] && [ -d "$store" ]; then
    (cd "$work" && find . -name '*.log' -exec cp --parents {} "$repo/$store/" \; 2>/dev/null) || true
    echo "bench_net: the members' logs are in $store/" >&2
  fi
  rm -rf "$work"
}
trap 'status=$?; cleanup' EXIT

(cd benchnet && go build -o "$work/benchnet" .)
store=store/bench_net/$(date +%Y%m%d-%H%M%S)
mkdir -p "$store"
echo "bench_net: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/ {print $2}') GiB; $(go version | cut -d' ' -f3); etcd $("$etcd37" --version | sed -n 's/^etcd Version: //p') (and $([ -n "$etcd34" ] && "$etcd34" --version | sed -n 's/^etcd Version: //p' || echo none)); commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown); load average $(cut -d' ' -f1-3 /proc/loadavg)"

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

# settle: until this machine's CPUs were 90 % idle or more over one
# second (steal counts as busy), 60 s at most; prints how long it took.
# A cores round at two cores needs both cores, one at one core has the
# second to absorb what else runs, so a busy minute lowers the ratio:
# the first rounds after the failover part once ran while its processes
# wound down (docs/performance.md).
settle() {
  local started=$SECONDS a b busy total
  while :; do
    read -r -a a < <(head -1 /proc/stat)
    sleep 1
    read -r -a b < <(head -1 /proc/stat)
    # cpu user nice system idle iowait irq softirq steal
    total=$(( (b[1]+b[2]+b[3]+b[4]+b[5]+b[6]+b[7]+b[8]) - (a[1]+a[2]+a[3]+a[4]+a[5]+a[6]+a[7]+a[8]) ))
    busy=$(( total - (b[4]+b[5]) + (a[4]+a[5]) ))
    if [ $((busy * 10)) -le "$total" ]; then
      echo "cores: the machine was idle ($((100 - 100 * busy / (total > 0 ? total : 1))) %) after $((SECONDS - started)) s"
      return 0
    fi
    if [ $((SECONDS - started)) -ge 60 ]; then
      echo "cores: the machine stayed busy ($((100 * busy / (total > 0 ? total : 1))) % in the last second) for 60 s; measuring anyway" >&2
      return 0
    fi
  done
}

# cores_part [-rounds N] [-benchtime D]: BenchmarkMemberCores at
# GOMAXPROCS 1 and 2, in adjacent pairs: each round is one process that
# runs each op at 1, 2, 2, 1 cores (2, 1, 1, 2 in even rounds), one
# -benchtime each, so that the two runs of a pair lie seconds apart and
# a change of the machine's speed (this virtual machine's CPUs slow
# down by up to 1.7x for tens of seconds at a time) falls on both runs
# of most pairs alike. The goal is the median over the pairs of the
# two-core run's ops/s over the one-core run's; scripts/cores_goal.awk
# says which pairs count (both runs got their cores, and the one-core
# run's CPU per op shows the machine at its usual speed).
# Each round also runs two GOMAXPROCS=1 processes at once: what this
# machine gives two cores' worth of the same work that shares nothing
# (a virtual machine's second CPU may give less than its first), printed
# beside the goal, which stays 1.7x.
cores_part() {
  local rounds=7 benchtime=2s
  while [ $# -gt 0 ]; do
    case "$1" in
      -rounds) rounds=$2; shift 2 ;;
      -benchtime) benchtime=$2; shift 2 ;;
      *) echo "bench_net: cores: unknown flag $1 (-rounds N, -benchtime D)" >&2; return 2 ;;
    esac
  done
  if ! [ "$rounds" -ge 3 ] 2>/dev/null; then
    echo "bench_net: cores: -rounds must be a number, 3 or more (2 pairs a round; the goal needs 5), got '$rounds'" >&2
    return 2
  fi
  go test -c -o "$work/server.test" ./server
  local out=$store/cores.txt pairs=$store/cores-pairs.txt r k
  : >"$out"
  : >"$pairs"
  for r in $(seq "$rounds"); do
    settle
    # One process, both members (one loop and two) built once in it and
    # kept (benchMemberFor): the testing package runs each op at every
    # -cpu value in turn.
    "$work/server.test" -test.run '^$' -test.bench MemberCores \
      -test.cpu "$([ $((r % 2)) -eq 1 ] && echo 1,2,2,1 || echo 2,1,1,2)" \
      -test.benchtime "$benchtime" -test.count 1 | grep '^BenchmarkMemberCores' | sed "s/^/$r /" | tee -a "$out"
    for k in a b; do
      "$work/server.test" -test.run '^$' -test.bench MemberCores -test.cpu 1 \
        -test.benchtime "$benchtime" -test.count 1 | grep '^BenchmarkMemberCores' | sed "s/^/$r /" >"$pairs.$k" &
    done
    wait
    cat "$pairs.a" "$pairs.b" >>"$pairs"
    rm -f "$pairs.a" "$pairs.b"
  done
  echo "cores: two GOMAXPROCS=1 processes at once, each round:"
  cat "$pairs"
  cores_goal "$out" "$pairs" "$store/goals.txt" "$rounds"
}

# cores_goal OUT PAIRS GOALS ROUNDS: the cores part's figures and its goal line
# (scripts/cores_goal.awk says how).
cores_goal() {
  awk -v rounds="$4" -v want="lease_renew lease_check" -v goals="$3" -v pairs="$2" -f "$repo/scripts/cores_goal.awk" "$1"
}

for part in "${order[@]}"; do
  if [ "$part" = cores ]; then
    wait_quiet
    echo
    echo "=== bench_net cores (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    started=$SECONDS
    eval "part_flags=(${flags[$part]:-})"
    cores_part "${part_flags[@]}"
    echo "bench_net: cores took $((SECONDS - started)) s (load average now $(cut -d' ' -f1-3 /proc/loadavg)); its runs are in $store/cores.txt"
    continue
  fi
  wait_quiet
  echo
  echo "=== bench_net $part (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  started=$SECONDS
  eval "part_flags=(${flags[$part]:-})"
  # In the background, so that a signal to this script ends the wait at
  # once and its cleanup stops the program.
  "$work/benchnet" "$part" -repo "$repo" -work "$work" -store "$store" -pidfile "$pidfile" \
    -etcd "$etcd37" -etcd34 "$etcd34" "${part_flags[@]}" &
  bench_pid=$!
  wait "$bench_pid"
  bench_pid=""
  echo "bench_net: $part took $((SECONDS - started)) s (load average now $(cut -d' ' -f1-3 /proc/loadavg)); its runs are in $store/"
done

echo
echo "=== bench_net goals (load average now $(cut -d' ' -f1-3 /proc/loadavg))"
cat "$store/goals.txt" 2>/dev/null || echo "(no part with goals ran)"
