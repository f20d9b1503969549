#!/usr/bin/env bash
# A local lease-node cluster on 127.0.0.1, for people and tests.
#
#   scripts/cluster.sh up [N] [extra serve flags]   build, make certificates, start N members
#                                                   (default 3), wait until each is ready;
#                                                   the last line is ENDPOINTS=<client URLs>
#   scripts/cluster.sh down                         stop exactly those processes (SIGTERM, then
#                                                   SIGKILL after 10 s) and wait for them
#   scripts/cluster.sh pids                         print "id pid", one member a line, and
#                                                   "id pid dead" for one that is not running
#   scripts/cluster.sh restart ID                   stop member ID and start it again with the
#                                                   default boot wait (the longest lease), as an
#                                                   operator restarts one node; returns once it is
#                                                   ready and every running member reaches it (the
#                                                   next of a rolling restart may then be stopped)
#   scripts/cluster.sh join ID [extra serve flags]  start a brand-new node ID for a cluster started
#                                                   with -membership on: a certificate from the
#                                                   cluster's CA, every node started so far and
#                                                   ID at the end of -cluster (its place is its
#                                                   ballot lane), -join on, no boot wait (a new
#                                                   identity has nothing to forget); it votes once
#                                                   `leasectl member add ID -addr PEER` names it.
#                                                   The last lines are ENDPOINT=<its client URL>
#                                                   and PEER=<its peer address>
#
# The first start uses -boot-wait-ms 0 (every member starts empty: nothing
# to forget); a restart never does. State (binary, certificates, PIDs,
# logs) is in .cluster/ (ignored by git), or $CLUSTER_STATE_DIR. Members
# inherit the environment: LEASE_CLIENT_TOKEN=... sets a client token.
# CLUSTER_CLIENT_TLS=1 serves clients over HTTPS (CA: .cluster/certs/ca.crt).
# Exit status: 0 done, 1 failed (or a cluster already runs), 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
state=${CLUSTER_STATE_DIR:-$PWD/.cluster}
bin=$state/lease-node
pidfile=$state/pids

usage() { sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# alive PID: the process runs and is our binary.
alive() {
  kill -0 "$1" 2>/dev/null && tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -- "^$bin serve " >/dev/null
}

running_pids() {
  [ -f "$pidfile" ] || return 0
  while read -r id pid; do
    if alive "$pid"; then echo "$id $pid"; fi
  done <"$pidfile"
}

# free_port: a port below the kernel's ephemeral range (so no outgoing
# connection takes it meanwhile) that no socket uses (/proc/net/tcp*, any
# state), and not handed out before by this run.
taken=" "
low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
free_port() {
  local port hex
  while :; do
    port=$((10000 + RANDOM % (low - 10000)))
    hex=$(printf ':%04X' "$port")
    case "$taken" in *" $port "*) continue ;; esac
    # grep reads to the end (no -q): stopping at a match would kill awk
    # with SIGPIPE, and under pipefail a port in use would pass as free.
    if ! awk 'NR > 1 {print $2}' /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -- "$hex\$" >/dev/null; then
      taken="$taken$port "
      echo "$port"
      return
    fi
  done
}

scheme() { if [ "${CLUSTER_CLIENT_TLS:-}" = 1 ]; then echo https; else echo http; fi; }

# ready URL: /readyz answers 200.
ready() {
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 --cacert "$state/certs/ca.crt" "$1/readyz" || true)
  [ "$code" = 200 ]
}

# start_member ID ARGS...: start one member in the background, record its PID.
start_member() {
  local id=$1; shift
  printf '%s\n' "$@" >"$state/$id.args"
  nohup "$bin" serve "$@" >>"$state/$id.log" 2>&1 </dev/null &
  local pid=$!
  grep -v "^$id " "$pidfile" 2>/dev/null >"$pidfile.new" || true
  echo "$id $pid" >>"$pidfile.new"
  sort "$pidfile.new" >"$pidfile" && rm -f "$pidfile.new"
}

# wait_ready ID URL: until ID's /readyz is 200 (60 s at most), or it exits.
wait_ready() {
  local id=$1 url=$2 pid deadline=$((SECONDS + 60))
  pid=$(awk -v id="$id" '$1 == id {print $2}' "$pidfile")
  until ready "$url"; do
    # kill -0, not alive: right after the start the child may not have
    # exec'd the binary yet (its command line is still the shell's or
    # nohup's), and it is this script's own child, so its PID is not
    # reused before the shell reaps it.
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "cluster: $id (pid $pid) exited; the end of $state/$id.log:" >&2
      tail -n 5 "$state/$id.log" >&2
      return 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "cluster: $id is not ready after 60 s; see $state/$id.log" >&2
      return 1
    fi
    sleep 0.1
  done
}

# wait_reached ID URL: until ID's /readyz counts every acceptor whose
# process runs (60 s at most). /readyz alone says ID serves with a
# majority, which ID and one other member make; a rolling restart that
# stopped that other one next would leave ID and a member that does not
# reach it yet, no majority that talks.
wait_reached() {
  local id=$1 url=$2 deadline=$((SECONDS + 60)) body members want got live
  while :; do
    body=$(curl -s --max-time 2 --cacert "$state/certs/ca.crt" "$url/readyz" || true)
    members=$(printf '%s' "$body" | sed -n 's/.*"members":\[\([^]]*\)\].*/\1/p')
    got=$(printf '%s' "$body" | sed -n 's/.*"acceptors_reachable":\([0-9]*\).*/\1/p')
    want=0 live=""
    while read -r mid _ dead; do
      if [ -z "$dead" ] && [[ $members == *"\"$mid\""* ]]; then want=$((want + 1)); live="$live $mid"; fi
    done < <(pids)
    if [ -n "$got" ] && [ "$got" -ge "$want" ]; then return 0; fi
    if [ $SECONDS -ge $deadline ]; then
      echo "cluster: $id is ready, but after 60 s it counts ${got:-?} of the $want running acceptors ($live) as answering;" \
        "stopping another member now could leave no majority that reaches itself; see $state/*.log" >&2
      return 1
    fi
    sleep 0.1
  done
}

# stop_pids: stop the members listed on stdin ("id pid" lines): SIGTERM,
# then SIGKILL for any still running after 10 s; wait until they are gone.
stop_pids() {
  local id pid list left deadline
  list=$(cat)
  [ -n "$list" ] || return 0
  echo "$list" | while read -r id pid; do kill -TERM "$pid" 2>/dev/null || true; done
  deadline=$((SECONDS + 10))
  while :; do
    left=$(echo "$list" | while read -r id pid; do if alive "$pid"; then echo "$id $pid"; fi; done)
    [ -z "$left" ] && return 0
    if [ $SECONDS -ge $deadline ]; then
      echo "$left" | while read -r id pid; do echo "cluster: $id (pid $pid) ignored SIGTERM for 10 s; SIGKILL" >&2; kill -KILL "$pid" 2>/dev/null || true; done
      deadline=$((SECONDS + 5))
    fi
    sleep 0.1
  done
}

up() {
  local n=3
  if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then n=$1; shift; fi
  if [ "$n" -lt 1 ] || [ "$n" -gt 32 ]; then echo "cluster: N must be 1..32, got $n" >&2; exit 2; fi
  if [ -n "$(running_pids)" ]; then
    echo "cluster: a cluster is already running (scripts/cluster.sh pids lists it; scripts/cluster.sh down stops it)" >&2
    exit 1
  fi
  rm -rf "$state" && mkdir -p "$state"
  go build -o "$bin" .
  local ids="" i
  for i in $(seq 1 "$n"); do ids="$ids${ids:+,}n$i"; done
  "$bin" certs -dir "$state/certs" -members "$ids" >/dev/null
  local attempt
  for attempt in 1 2 3; do
    if start_all "$n" "$@"; then return 0; fi
    if ! grep -qs "address already in use" "$state"/n*.log; then break; fi
    echo "cluster: a port was taken meanwhile; trying other ports" >&2
    running_pids | stop_pids
    rm -f "$pidfile" "$state"/n*.log
  done
  running_pids | stop_pids
  rm -f "$pidfile"
  exit 1
}

# start_all N FLAGS...: pick ports, start every member, wait until all are ready.
start_all() {
  local n=$1; shift
  local cluster="" endpoints="" i
  declare -A client
  for i in $(seq 1 "$n"); do
    cluster="$cluster${cluster:+,}n$i=127.0.0.1:$(free_port)"
    client[$i]=127.0.0.1:$(free_port)
    endpoints="$endpoints${endpoints:+,}$(scheme)://${client[$i]}"
  done
  for i in $(seq 1 "$n"); do
    local tls=()
    if [ "$(scheme)" = https ]; then tls=(-client-tls-cert "$state/certs/http.crt" -client-tls-key "$state/certs/http.key"); fi
    start_member "n$i" -id "n$i" -cluster "$cluster" -client-addr "${client[$i]}" \
      -tls-ca "$state/certs/ca.crt" -tls-cert "$state/certs/n$i.crt" -tls-key "$state/certs/n$i.key" \
      "${tls[@]}" -boot-wait-ms 0 "$@"
  done
  for i in $(seq 1 "$n"); do
    wait_ready "n$i" "$(scheme)://${client[$i]}" || return 1
  done
  echo "$endpoints" >"$state/endpoints"
  echo "$cluster" >"$state/cluster"
  echo "cluster: $n members ready (logs in $state/n*.log; scripts/cluster.sh down stops them)"
  echo "cluster: first start with -boot-wait-ms 0 (every member started empty); scripts/cluster.sh restart ID restarts one with the default boot wait"
  echo "ENDPOINTS=$endpoints"
}

down() {
  if [ -z "$(running_pids)" ]; then
    echo "cluster: no cluster is running"
    rm -f "$pidfile"
    return 0
  fi
  running_pids | while read -r id pid; do echo "cluster: stopping $id (pid $pid)"; done
  running_pids | stop_pids
  rm -f "$pidfile"
  echo "cluster: stopped"
}

# pids: every member as "id pid"; one whose process is gone (killed,
# crashed, or its PID now names another program) as "id pid dead".
pids() {
  [ -f "$pidfile" ] || return 0
  local id pid
  while read -r id pid; do
    if alive "$pid"; then echo "$id $pid"; else echo "$id $pid dead"; fi
  done <"$pidfile"
}

restart() {
  local id=${1:-}
  if [ -z "$id" ] || [ ! -f "$state/$id.args" ]; then
    echo "cluster: restart needs the id of a member (scripts/cluster.sh pids lists them)" >&2
    exit 2
  fi
  grep "^$id " "$pidfile" | stop_pids
  local args=() url
  # The member's flags without -boot-wait-ms: a restart takes the default.
  mapfile -t args < <(awk 'skip {skip = 0; next} $0 == "-boot-wait-ms" {skip = 1; next} {print}' "$state/$id.args")
  url=$(awk 'prev == "-client-addr" {print; exit} {prev = $0}' "$state/$id.args")
  start_member "$id" "${args[@]}"
  wait_ready "$id" "$(scheme)://$url"
  wait_reached "$id" "$(scheme)://$url"
  echo "cluster: $id restarted with the default boot wait and is ready; every running member reaches it"
}

# join ID FLAGS...: start a new node for a running cluster with
# membership on (see the usage above); it waits for /healthz only: the
# node is ready once it is a member.
join() {
  local id=${1:-}
  [ $# -gt 0 ] && shift
  if [ -z "$id" ] || ! [[ $id =~ ^[A-Za-z0-9._-]+$ ]]; then
    echo "cluster: join needs the new node's id (letters, digits, . _ -)" >&2
    exit 2
  fi
  if [ -z "$(running_pids)" ] || [ ! -f "$state/n1.args" ]; then
    echo "cluster: no cluster is running (scripts/cluster.sh up 3 -membership on starts one)" >&2
    exit 1
  fi
  if [ -f "$state/$id.args" ]; then
    echo "cluster: $id was started before; a new node needs a new id (a reused one is a restart: scripts/cluster.sh restart $id)" >&2
    exit 1
  fi
  "$bin" certs -dir "$state/certs" -members "$id" >/dev/null
  local cluster peer client url tls=()
  # Every node ever started, in order, then this one: its place is its
  # ballot lane, which no other node may have had.
  cluster=$(cat "$state/cluster")
  peer=127.0.0.1:$(free_port)
  client=127.0.0.1:$(free_port)
  url="$(scheme)://$client"
  if [ "$(scheme)" = https ]; then tls=(-client-tls-cert "$state/certs/http.crt" -client-tls-key "$state/certs/http.key"); fi
  # The cluster's own settings (n1's flags less the ones of one node):
  # every member needs the same lease bounds.
  local shared=()
  mapfile -t shared < <(awk 'skip {skip = 0; next} /^-(id|cluster|client-addr|tls-ca|tls-cert|tls-key|client-tls-cert|client-tls-key|boot-wait-ms|join)$/ {skip = 1; next} {print}' "$state/n1.args")
  start_member "$id" -id "$id" -cluster "$cluster,$id=$peer" -client-addr "$client" \
    -tls-ca "$state/certs/ca.crt" -tls-cert "$state/certs/$id.crt" -tls-key "$state/certs/$id.key" \
    "${tls[@]}" "${shared[@]}" -membership on -join on -boot-wait-ms 0 "$@"
  echo "$cluster,$id=$peer" >"$state/cluster"
  local deadline=$((SECONDS + 30))
  until curl -s -o /dev/null --max-time 2 --cacert "$state/certs/ca.crt" "$url/healthz"; do
    if [ $SECONDS -ge $deadline ]; then
      echo "cluster: $id does not answer /healthz after 30 s; see $state/$id.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "cluster: $id started (a learner until a member_add names it; log in $state/$id.log)"
  echo "ENDPOINT=$url"
  echo "PEER=$peer"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  up) up "$@" ;;
  down) down ;;
  pids) pids ;;
  restart) restart "$@" ;;
  join) join "$@" ;;
  *) usage ;;
esac
