#!/usr/bin/env bash
# Runs the node under the project's Maelstrom-compatible harness and checks
# each verdict and exit status (0 valid, 1 invalid, 2 unknown, 254 bad
# arguments, 255 the run failed):
#   - the echo workload, plain and with a fault list naming partition twice;
#   - the lease workload without faults, and under partitions (valid, with
#     leases granted during partitions);
#   - the acceptance run of the kill, pause and clock nemeses: 5 nodes,
#     30 s, 1 s leases, --nemesis partition,kill,pause,clock
#     --nemesis-interval 2, on a node built with -tags clockfault: valid,
#     kills, pauses and clock skews in the history (each within the nodes'
#     bounds: rates within 1000 ppm, offsets within 250 ms), grants that
#     succeed inside faults, every clock reset and every chunk read back
#     after the final heal;
#   - two negative controls the lease checker must reject (exit 1 with
#     violations): LEASE_ACCEPTORS=self (each node its own acceptor), and
#     --kill-without-boot-wait (restarted nodes forget accepted leases at
#     once), on seeds whose schedule kills every node late in the run;
#   - the master workload: 5 nodes under partitions, valid, a master most
#     of the time outside partitions and a change of master, a token in
#     every is_master answer; and its negative controls LEASE_ACCEPTORS=
#     self (exit 1) and nodes that number their masterships themselves
#     instead of naming the token (exit 1, tokens shared or going back);
#   - the master workload under partitions, kills and clock skews: valid,
#     every restarted node booted with LEASE_BOOT_WAIT_MS = --lease-ms; and
#     the kill nemesis's negative control --kill-without-boot-wait (exit 1,
#     two masters), with 60 s leases;
#   - the member nemesis (membership changes while the run goes on): 5
#     nodes, 30 s, --nemesis partition,kill,member: valid, members
#     removed and added, and an independent replay of history.jsonl (a
#     Python reading of the contract's holdings and token rule, and
#     `maelstrom analyze` of a copy) agreeing; its negative control, a
#     node built with -tags weaken with the waiting rule off
#     (LEASE_WEAKEN=membership-no-wait), on fixed seeds: invalid, with
#     violations that the replay finds too;
#   - the clock nemesis's negative control: rates within 1 +- 50%
#     (--clock-drift-ppm 500000, where the nodes assume 1000 ppm): the
#     lease checker must find violations (exit 1); and a
#     normal build under --nemesis clock, which must fail the run (255);
#   - bad arguments (254) and a node that is not a lease node (255).
# A negative control must be caught whatever the machine's load: each runs
# on seeds whose schedule applies its fault, and one whose fault did not
# take effect as its violation needs (scripts/control_applied.py) is
# retried on the next seed (expect_caught); one whose fault took effect
# and that stayed valid fails the script.
# About 5 minutes on 2 cores (the clock nemesis adds about 25 s: its
# negative control, the 255 check and the clockfault build; the member
# nemesis about 1 minute: its two runs and the weaken build).
#
# HARNESS_SEED=S gives every run --seed S (a run that names its own seed
# keeps it), so that two trees can be compared on the same schedules
# (scripts/compare_stores.sh); MAELSTROM and LEASE_NODE use prebuilt
# binaries instead of building these from the tree, and
# LEASE_NODE_CLOCKFAULT a prebuilt `go build -tags clockfault` node;
# HARNESS_STORE puts the runs elsewhere than store/checks.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
# The runs stay in store/checks/ (ignored by git), so the report paths
# printed below stay valid after the script ends.
store=${HARNESS_STORE:-store/checks}
rm -rf "$store" && mkdir -p "$store"
if [ -n "${MAELSTROM:-}" ]; then cp "$MAELSTROM" "$bin/maelstrom"; else go build -o "$bin/maelstrom" ./maelstrom/cmd/maelstrom; fi
if [ -n "${LEASE_NODE:-}" ]; then cp "$LEASE_NODE" "$bin/lease-node"; else go build -o "$bin/lease-node" .; fi
# The clock nemesis needs a node that follows its clock file.
if [ -n "${LEASE_NODE_CLOCKFAULT:-}" ]; then cp "$LEASE_NODE_CLOCKFAULT" "$bin/lease-node-clockfault"
else go build -tags clockfault -o "$bin/lease-node-clockfault" .; fi
clockfault="$bin/lease-node-clockfault"
# The member nemesis's negative control needs a node that can switch a
# safety rule off (LEASE_WEAKEN); a normal build cannot.
if [ -n "${LEASE_NODE_WEAKEN:-}" ]; then cp "$LEASE_NODE_WEAKEN" "$bin/lease-node-weaken"
else go build -tags weaken -o "$bin/lease-node-weaken" .; fi
weaken="$bin/lease-node-weaken"
seed_args=()
[ -z "${HARNESS_SEED:-}" ] || seed_args=(--seed "$HARNESS_SEED")

# verdict LOG: the harness's verdict and the summary below it, whole; a
# run without a verdict (bad arguments) shows its last lines.
verdict_line='^(Everything looks good|Analysis invalid|Validity unknown|The run failed)'
verdict() {
  if grep -qE "$verdict_line" "$1"; then
    sed -n -E "/$verdict_line/,\$p" "$1"
  else
    tail -n 6 "$1"
  fi
}

# console_names_first_violation NAME: the harness's output counts the
# violations by kind and shows the first one with the node of each op.
console_names_first_violation() {
  local log="$store/$1.log"
  grep -qE '^  violations: [0-9]+ \([a-z-]+ [0-9]+' "$log" && grep -qE '^  the first: .*ops [0-9]+-[0-9]+ via n[0-9]+' "$log" || {
    echo "harness check '$1': the console does not count the violations by kind and show the first with its nodes" >&2
    exit 1
  }
  echo "the console counts the violations by kind and shows the first with its nodes: True"
}

# expect STATUS NAME ARGS...: run the harness and require exit STATUS.
# NODE=PATH runs that node program instead of the normal build.
expect() {
  local want=$1 name=$2; shift 2
  printf -- '--- %s\n' "$name"
  run_check "$name" "$@"
  [ "$got" -eq "$want" ] || wrong_status "$name" "$want"
  printf 'ok: %s exited %d as expected\n' "$name" "$got"
}

# run_check NAME ARGS...: one harness run into $store/NAME; its exit
# status in got, its verdict printed.
run_check() {
  local name=$1; shift
  set +e
  "$bin/maelstrom" test --bin "${NODE:-$bin/lease-node}" --store "$store/$name" "${seed_args[@]}" "$@" > "$store/$name.log" 2>&1
  got=$?
  set -e
  verdict "$store/$name.log"
}

wrong_status() {
  echo "harness check '$1' exited $got, want $2; its output:" >&2
  cat "$store/$1.log" >&2
  exit 1
}

# expect_caught NAME "SEEDS" KIND ARGS...: scripts/expect_caught.sh.
checks="harness check"
. scripts/expect_caught.sh

# results NAME EXPR: evaluate a Python expression over results.json (r),
# history.jsonl (h, a list of ops) and the nemesis ops (nem); print it.
results() {
  python3 - "$store/$1/latest" "$2" <<'EOF'
import json, sys
d, expr = sys.argv[1], sys.argv[2]
r = json.load(open(d + "/results.json"))
h = [json.loads(line) for line in open(d + "/history.jsonl")]
nem = [op for op in h if op["process"] == "nemesis"]
print(eval(expr))
EOF
}

# require_clock NAME: the clock nemesis ran within the nodes' bounds (1 s
# leases: offsets within 250 ms, rates within 1000 ppm, every value a
# node's offset and rate) and every node followed its clock file.
require_clock() {
  require "$1" "clock ops within 1000 ppm and 250 ms, the run within the nodes' bounds" \
    "r['nemesis']['clock'] == {'drift_ppm': 1000, 'max_offset_ms': 250, 'node_drift_ppm': 1000, 'node_max_offset_ms': 250, 'within_bound': True} and all(abs(c['offset_ms']) <= 250 and abs(c['rate'] - 1) <= 0.001 + 1e-9 and abs(c.get('strobe', {'rate': 1})['rate'] - 1) <= 0.001 + 1e-9 for op in nem if op['f'].startswith('clock-') for c in op['value'].values())"
  require "$1" "every node followed its clock file" \
    "all('clockfault build: following ' in open(f).read() for f in __import__('glob').glob(d + '/node-logs/*.log')) and len(__import__('glob').glob(d + '/clock/*.json')) == len(r['config']['nodes'])"
  results "$1" "'clock: %d skews (%d strobes), %d resets; largest offset %d ms, largest rate error %d ppm' % (r['nemesis']['ops'].get('clock-skew', 0), sum(1 for op in nem[0::2] if op['f'] == 'clock-skew' and any('strobe' in c for c in op['value'].values())), r['nemesis']['ops'].get('clock-reset', 0), max([abs(c['offset_ms']) for op in nem if op['f'] == 'clock-skew' for c in op['value'].values()] or [0]), round(max([abs(c['rate'] - 1) for op in nem if op['f'] == 'clock-skew' for c in op['value'].values()] or [0]) * 1e6))"
}

# replay NAME: judge the run's history.jsonl again, independently of the
# Go checker, by the contract's words ("What valid means for the lease
# workload"): a server holds a chunk during [completion, invoke +
# expires_in_ms] of an ok grant naming it, and [completion, invoke +
# new_expires_in_ms] of an ok renew, cut short at the invoke of its
# release with a token >= the lease's; two servers must never hold a
# chunk at once; a check (or a grant naming another primary) names the
# server that held the chunk throughout it, and "no holder" only when
# none did; a grant or renew invoked after another server's ok grant or
# renew completed gets a larger token, and a token names one server.
# Prints the counts: "two-primaries=N token=M reads=R holdings=H".
replay() {
  python3 - "$store/$1/latest/history.jsonl" <<'EOF'
import collections, json, sys
ops = [json.loads(line) for line in open(sys.argv[1])]
inv, pairs = {}, []
for op in ops:
    if op["process"] == "nemesis":
        continue
    if op["type"] == "invoke":
        inv[op["process"]] = op
    elif op["process"] in inv:
        pairs.append((inv.pop(op["process"]), op))
releases = collections.defaultdict(list)
for i, c in pairs:
    if i["f"] == "release":
        releases[(i["value"]["chunk"], i["value"]["server"])].append((i["time"], i["value"].get("token", 0)))
holds, leases = collections.defaultdict(list), []
for i, c in pairs:
    v = c.get("value") or {}
    if c["type"] != "ok" or i["f"] not in ("grant", "renew"):
        continue
    if i["f"] == "grant" and v.get("primary") != v.get("server"):
        continue
    end = i["time"] + 1e6 * (v["expires_in_ms"] if i["f"] == "grant" else v["new_expires_in_ms"])
    for t, token in releases[(v["chunk"], v["server"])]:
        if token >= v["token"] and c["time"] <= t < end:
            end = t
    holds[v["chunk"]].append((v["server"], c["time"], end))
    leases.append((v["chunk"], v["server"], i["time"], c["time"], v["token"]))
two = sum(1 for hs in holds.values() for a in range(len(hs)) for b in range(a + 1, len(hs))
          if hs[a][0] != hs[b][0] and max(hs[a][1], hs[b][1]) < min(hs[a][2], hs[b][2]))
reads = 0
for i, c in pairs:
    v = c.get("value") or {}
    if c["type"] != "ok" or not (i["f"] == "check" or i["f"] == "grant" and v.get("primary") != v.get("server")):
        continue
    said = None if v.get("expired") else v.get("primary")
    for server, start, end in holds[v["chunk"]]:
        if start <= i["time"] and c["time"] <= end and said != server:
            reads += 1
            break
named = collections.defaultdict(set)
for chunk, server, _, _, token in leases:
    named[(chunk, token)].add(server)
token = sum(1 for s in named.values() if len(s) > 1)
token += sum(1 for a in leases for b in leases
             if a[0] == b[0] and a[1] != b[1] and a[3] < b[2] and b[4] <= a[4])
print("two-primaries=%d token=%d reads=%d holdings=%d" % (two, token, reads, len(leases)))
EOF
}

# replay_agrees NAME VALID: the independent replay and `maelstrom analyze`
# of a copy of the run both agree with the run's verdict (VALID is True
# or False): no violation in a valid run, some in an invalid one (the
# member nemesis's negative control).
replay_agrees() {
  local name=$1 valid=$2 counts copy got
  counts=$(replay "$name")
  echo "independent replay of $name: $counts"
  case $valid in
    True) [[ $counts == "two-primaries=0 token=0 reads=0 "* ]] ;;
    False) [[ $counts != "two-primaries=0 token=0 reads=0 "* ]] ;;
  esac || { echo "harness check '$name': the independent replay ($counts) does not agree with the verdict (valid: $valid)" >&2; exit 1; }
  copy=$(mktemp -d)
  cp -r "$(readlink -f "$store/$name/latest")/." "$copy/"
  "$bin/maelstrom" analyze "$copy" > "$copy.log" 2>&1 || true
  got=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['valid'])" "$copy/results.json")
  rm -rf "$copy" "$copy.log"
  [ "$got" = "$valid" ] || { echo "harness check '$name': maelstrom analyze of a copy says valid=$got, the run $valid" >&2; exit 1; }
  echo "maelstrom analyze of a copy agrees: valid=$got"
}

# require NAME DESCRIPTION EXPR: fail unless EXPR is True.
require() {
  local got
  got=$(results "$1" "$3")
  printf '%s: %s\n' "$2" "$got"
  [ "$got" = "True" ] || { echo "harness check '$1': $2 does not hold" >&2; exit 1; }
}

expect 0 echo -w echo --node-count 1 --time-limit 5 --rate 50
expect 0 echo-partition-twice -w echo --node-count 3 --time-limit 5 --rate 50 \
  --nemesis partition,partition --nemesis-interval 1
expect 0 lease-3-nodes -w lease --node-count 3 --time-limit 10 --rate 50
expect 0 lease-5-nodes-partitions -w lease --node-count 5 --time-limit 30 --rate 50 --latency 10 \
  --nemesis partition --nemesis-interval 2 --lease-ms 1000
require lease-5-nodes-partitions "leases granted inside partitions" \
  "r['workload_stats']['holdings_in_partitions'] > 0"

# The acceptance run of the kill, pause and clock nemeses.
NODE=$clockfault expect 0 acceptance-partition-kill-pause-clock -w lease --node-count 5 --time-limit 30 \
  --rate 50 --latency 10 --nemesis partition,kill,pause,clock --nemesis-interval 2 --lease-ms 1000
run=acceptance-partition-kill-pause-clock
require $run "kills, starts, pauses, resumes and clock skews in the history" \
  "all(any(op['f'] == f for op in nem) for f in ('kill', 'start', 'pause', 'resume', 'start-partition', 'clock-skew', 'clock-reset'))"
require_clock $run
require $run "the final phase reset every clock, then resumed and started the nodes" \
  "(lambda i: nem[-1]['f'] == 'start' and all(op['f'] in ('clock-reset', 'resume', 'start') for op in nem[i - 1:]) and len(nem[i]['value']) == 5 and all(c == {'offset_ms': 0, 'rate': 1} for c in nem[i]['value'].values()))(max(k for k, op in enumerate(nem) if op['f'] == 'clock-reset'))"
require $run "nodes killed and paused" "r['nemesis']['nodes_killed'] > 0 and r['nemesis']['nodes_paused'] > 0"
require $run "grants that succeeded inside faults" "r['workload_stats']['grants_in_faults'] > 0"
require $run "the final phase read every chunk back" "r['final']['ok'] == r['final']['invoked'] == 3"
require $run "history in time order" "all(a['time'] <= b['time'] for a, b in zip(h, h[1:]))"
results $run "'ok fraction %.3f (inside faults %.3f, outside %.3f); failover median %.0f ms inside faults, %.0f ms outside; heal to grant median %.0f ms' % (r['availability']['ok_fraction'], r['workload_stats']['availability']['inside_faults']['all']['fraction'], r['workload_stats']['availability']['outside_faults']['all']['fraction'], r['workload_stats']['failover_inside_faults']['median_ms'], r['workload_stats']['failover_outside_faults']['median_ms'], r['workload_stats']['heal_to_grant']['median_ms'])"

# The member nemesis: members removed and added while partitions and
# kills go on (LEASE_MEMBERSHIP=on on every node). Valid, with changes
# that took effect, and the independent replay agreeing. On a fixed seed
# (12: eight changes took effect in a trial; seeds 11 and 13 three and
# five): with kills every second instead of every two, workers bound to
# killed nodes wait out so many client timeouts that some runs never
# complete a release (the stats checker's "no release op ever completed").
expect 0 acceptance-partition-kill-member -w lease --node-count 5 --time-limit 30 --rate 50 --latency 10 \
  --nemesis partition,kill,member --nemesis-interval 2 --lease-ms 1000 --seed 12
run=acceptance-partition-kill-member
require $run "members removed and added (epochs answered), nodes killed" \
  "len({op['value']['epoch'] for op in nem[1::2] if op['f'] == 'member' and 'epoch' in op['value']}) >= 3 and any(op['value']['op'] == 'remove' and 'epoch' in op['value'] for op in nem[1::2] if op['f'] == 'member') and any(op['value']['op'] == 'add' and 'epoch' in op['value'] for op in nem[1::2] if op['f'] == 'member') and r['nemesis']['nodes_killed'] > 0"
require $run "every node ran with membership on" \
  "all('membership on' in open(f).read() for f in __import__('glob').glob(d + '/node-logs/*.log'))"
results $run "'member changes: %d answered with a configuration, %s refused by code, %d timed out; last epoch %d' % (sum(1 for op in nem[1::2] if op['f'] == 'member' and 'epoch' in op['value']), dict(__import__('collections').Counter(op['value']['error'] for op in nem[1::2] if op['f'] == 'member' and 'error' in op['value'])), sum(1 for op in nem[1::2] if op['f'] == 'member' and op['value'].get('timeout')), max([op['value']['epoch'] for op in nem[1::2] if op['f'] == 'member' and 'epoch' in op['value']] or [0]))"
replay_agrees $run True
# Its negative control: the waiting rule off (a -tags weaken node with
# LEASE_WEAKEN=membership-no-wait), so a change follows the last at once
# and two configurations two changes apart, whose majorities need not
# share a member, grant the same chunk while the older one's leases run.
# Changes every half second on average; without kills (a killed node's
# workers wait out the 5 s client timeout, and too few grants overlap the
# changes: seeds 1 to 4 with kills stayed valid). Whether a seed is
# caught depends on timing: of seeds 1 to 5, three were caught in each of
# two trials (two primaries, reads of the wrong holder or of none), which
# three varied; so they are tried in turn until one is. The same runs
# with the rule on are valid.
NODE=$weaken LEASE_WEAKEN=membership-no-wait expect_caught negative-control-member-no-wait "2 3 4 1 5" - -w lease \
  --node-count 5 --time-limit 20 --rate 100 --latency 5 --nemesis partition,member --nemesis-interval 0.5 --lease-ms 1000
run=negative-control-member-no-wait
require $run "the nodes ran with the waiting rule off and 1 s longest leases, and the lease checker found violations" \
  "all('WEAKENED BUILD' in open(f).read() and 'lease 1000 ms (max 1000)' in open(f).read() for f in __import__('glob').glob(d + '/node-logs/*.log')) and r['checks']['workload'] is False and len(r['lease']['violations']) > 0"
results $run "'violations by kind: %s' % dict(__import__('collections').Counter(v['kind'] for v in r['lease']['violations']))"
replay_agrees $run False

# The master lease's acceptance run: valid, mastership held most of the
# time outside partitions, and moving between nodes. On a fixed seed: how
# often the master moves depends on whether the partitions happen to cut
# off the node that is master (timing decides which node that is) and on
# who wins the race after a stop reaches it; a random seed gave a single
# change in about one run of six (seed 11: 3 to 7 changes in 4 runs, and
# 1 with two busy loops beside it: no partition cut off the master).
expect 0 master-5-nodes-partitions -w master --node-count 5 --time-limit 30 --rate 50 \
  --concurrency 10 --latency 5 --nemesis partition --nemesis-interval 3 --seed 11
require master-5-nodes-partitions "a master most of the time outside partitions, and a change of master" \
  "r['workload_stats']['mastership']['outside_faults']['fraction'] > 0.6 and r['workload_stats']['mastership']['master_changes'] >= 1"
require master-5-nodes-partitions "a positive integer token in every ok status that says is_master, and none in the others" \
  "(lambda st: sum(1 for op in st if op['value']['is_master']) > 20 and all((type(op['value'].get('token')) is int and op['value']['token'] > 0) == op['value']['is_master'] for op in st))([op for op in h if op['type'] == 'ok' and op['f'] == 'status' and op['process'] != 'nemesis'])"
results master-5-nodes-partitions "'%d is_master answers, %d distinct tokens, growing across %d changes of master' % (r['master']['is_master_answers'], len({op['value']['token'] for op in h if op['type'] == 'ok' and op['f'] == 'status' and op['value'].get('is_master')}), r['workload_stats']['mastership']['master_changes'])"
results master-5-nodes-partitions "'mastered %.3f overall, %.3f outside partitions, %.3f inside; %d changes of master; failover median %s ms outside, %s ms inside' % (r['workload_stats']['mastership']['overall']['fraction'], r['workload_stats']['mastership']['outside_faults']['fraction'], r['workload_stats']['mastership']['inside_faults']['fraction'] or 0, r['workload_stats']['mastership']['master_changes'], (r['workload_stats']['failover']['outside_faults_ms'] or {}).get('p50'), (r['workload_stats']['failover']['inside_faults_ms'] or {}).get('p50'))"
LEASE_ACCEPTORS=self expect 1 negative-control-master-acceptors-self -w master --node-count 3 \
  --time-limit 10 --rate 50 --concurrency 6 --nemesis partition --nemesis-interval 2
console_names_first_violation negative-control-master-acceptors-self
require negative-control-master-acceptors-self "results.json lists the first 20 violations and counts them all (the rest in master-details.jsonl)" \
  "r['master']['violation_count'] > 20 and len(r['master']['violations']) == 20 and r['master']['details'] == 'master-details.jsonl' and sum(1 for l in open(d + '/master-details.jsonl') if l.startswith('{\"violation\"')) == r['master']['violation_count']"

# The master checker's fencing rules: nodes that number their own
# master lease instances (1, 2, ...) instead of naming the token, as a
# master counting its own terms would. A wrapper rewrites the token of
# every master_status_ok; the masterships themselves stay correct, so
# only the token rules can catch it (a new master starts again at 1).
cat >"$bin/lease-node-own-terms" <<'EOF'
#!/usr/bin/env bash
# Broken on purpose: the node's master_status_ok names its own count of
# master lease instances instead of the instance's token.
"$(dirname "$0")/lease-node" "$@" | python3 -u -c '
import re, sys
last, n = None, 0
def own(m):
    global last, n
    if m.group(1) != last:
        last, n = m.group(1), n + 1
    return "\"token\":%d" % n
for line in iter(sys.stdin.readline, ""):
    if "\"type\":\"master_status_ok\"" in line:
        line = re.sub(r"\"token\":(\d+)", own, line)
    sys.stdout.write(line)
'
EOF
chmod +x "$bin/lease-node-own-terms"
# The numbers break the token rules only once a second node becomes
# master, and without faults that takes a stop reaching the master and
# another node winning the race after it: seed 11's 10 s run had no
# change of master in 2 of 6 runs beside two busy loops. Partitions
# (which the correct masterships survive, one at a time) cut the master
# off now and then; 20 s runs of seeds 11 to 13 had a change in 5 of 6.
# A run counts once a second node was master (scripts/control_applied.py
# master-change), else the next seed is tried.
NODE=$bin/lease-node-own-terms expect_caught negative-control-master-own-terms "11 12 13 14" master-change -w master --node-count 3 \
  --time-limit 20 --rate 50 --concurrency 6 --latency 5 --nemesis partition --nemesis-interval 2
require negative-control-master-own-terms "the master checker found tokens shared or going back, and no two masters" \
  "r['master']['violations_by_kind'].get('token-back', 0) + r['master']['violations_by_kind'].get('token-shared', 0) > 0 and r['master']['violations_by_kind'].get('two-masters', 0) == 0"
results negative-control-master-own-terms "'violations by kind: %s' % r['master']['violations_by_kind']"

# The master lease under kills and clock skews: the harness gives every
# node --lease-ms (default 1000) as LEASE_MS and LEASE_MAX_MS, and every
# restarted node LEASE_BOOT_WAIT_MS the same, so no restarted acceptor
# forgets a mastership that still runs, whatever its clock within the
# bounds.
NODE=$clockfault expect 0 master-5-nodes-partition-kill-clock -w master --node-count 5 --time-limit 20 \
  --rate 50 --concurrency 10 --latency 5 --nemesis partition,kill,clock --nemesis-interval 2
run=master-5-nodes-partition-kill-clock
require $run "nodes killed and restarted" "r['nemesis']['nodes_killed'] > 0 and r['nemesis']['nodes_restarted'] > 0"
require_clock $run
require $run "every start with 1 s leases, every restart with a 1 s boot wait" \
  "(lambda logs: sum(l.count('lease 1000 ms (max 1000), boot wait 0 ms') for l in logs) == 5 and sum(l.count('lease 1000 ms (max 1000), boot wait 1000 ms') for l in logs) == r['nemesis']['nodes_restarted'])([open(f).read() for f in __import__('glob').glob(d + '/node-logs/*.log')])"
# Its negative control: restarts without the boot wait, 3 nodes, 60 s
# master leases (longer than twice the run, so a master never renews and
# nothing restores a mastership the restarted acceptors forgot), a kill
# or start every 2 s on average. Whether another node wins mastership
# after a majority forgot is a race (the old master, restarted, may win
# again), so a seed on which no other node did is not counted and the
# next is tried (scripts/control_applied.py master-amnesia). Seeds 468,
# 723 and 621 have kills of a majority early on; each was caught in each
# of its trials, the first two masters 4 to 15 s into the run. The same
# runs with the boot wait are valid.
expect_caught negative-control-master-kill-without-boot-wait "468 723 621" master-amnesia -w master --node-count 3 \
  --concurrency 10n --time-limit 20 --rate 50 --latency 5 --nemesis kill --nemesis-interval 2 --lease-ms 60000 \
  --kill-without-boot-wait
require negative-control-master-kill-without-boot-wait "the master checker found two masters" \
  "r['checks']['workload'] is False and any(v['kind'] == 'two-masters' for v in r['master']['violations'])"

# Negative controls: the lease checker itself must find violations.
LEASE_ACCEPTORS=self expect 1 negative-control-acceptors-self -w lease --node-count 3 --time-limit 20 \
  --rate 50 --nemesis partition --nemesis-interval 2
require negative-control-acceptors-self "the lease checker found violations" "r['checks']['workload'] is False"
console_names_first_violation negative-control-acceptors-self
require negative-control-acceptors-self "every holding in lease-details.jsonl names the node that answered it" \
  "all(h['node'] for l in open(d + '/lease-details.jsonl') if l.startswith('{\"chunk\"') for h in __import__('json').loads(l)['holdings'])"
# The kill nemesis's negative control: restarts without the boot wait,
# on seeds whose last kill before the 10 s time limit hits every node
# (seed 130: at 6.3 s; 76: 6.6 s; 224: 7.1 s) and no start follows
# before the final phase, with leases of 30 to 120 s. The final phase
# starts the nodes without the boot wait and reads every chunk: every
# acceptor forgot every lease, so the reads report no holder while a
# lease granted before the kill still runs, whatever the load
# (scripts/control_applied.py kill-all-lease checks that the kill came
# after an ok grant; a loaded machine that delays it past the time limit
# moves on to the next seed). Earlier kills of a majority can be caught
# sooner (two primaries). Leases must outlive the 5 s client timeout that
# holds up the workers of killed nodes and the final phase (README).
expect_caught negative-control-kill-without-boot-wait "130 76 224" kill-all-lease -w lease --node-count 3 --concurrency 3n \
  --time-limit 10 --rate 50 --latency 5 --nemesis kill --nemesis-interval 2 --lease-ms 120000 \
  --recovery-time 1 --kill-without-boot-wait
require negative-control-kill-without-boot-wait "the lease checker found violations" \
  "r['checks']['workload'] is False and len(r['lease']['violations']) > 0"

# The clock nemesis's negative control: rates drawn within 1 +- 50% while
# the nodes assume 1000 ppm. A majority of acceptors running fast ends
# their protection early while a holder, told in its proposer's time,
# still believes; a slow proposer believes too long. Whether a skew lands
# on a live lease depends on timing: on seed 3 of the 10 s run a majority
# ran fast for 2.7 s and was caught with 1 to 11 violations. Seeds 1054,
# 527 and 9 keep a majority at 1.25 or faster for 6.7, 6.6 and 5.4 s
# (18 to 33 violations each); a run counts once a majority ran that fast
# for four times the longest lease (scripts/control_applied.py
# fast-majority), else the next seed is tried. Within the bound the same
# nemesis is valid (the acceptance run above).
NODE=$clockfault expect_caught negative-control-clock-beyond-drift "1054 527 9" fast-majority -w lease --node-count 5 --time-limit 10 \
  --rate 50 --latency 5 --nemesis clock --nemesis-interval 1 --clock-drift-ppm 500000
run=negative-control-clock-beyond-drift
require $run "the run was beyond the bound, and the lease checker found violations" \
  "r['nemesis']['clock']['within_bound'] is False and r['checks']['workload'] is False and len(r['lease']['violations']) > 0"
results $run "'violations by kind: %s' % dict(__import__('collections').Counter(v['kind'] for v in r['lease']['violations']))"
# A normal build ignores its clock file: the clock nemesis would do
# nothing, so the run fails and says how to build the right node.
expect 255 clock-needs-clockfault-build -w lease --node-count 3 --time-limit 5 --rate 50 --nemesis clock
grep -q -- "go build -tags clockfault -o bin/lease-node-clockfault ." "$store/clock-needs-clockfault-build.log" ||
  { echo "the clock nemesis on a normal build did not say how to build a clockfault node" >&2; exit 1; }

# Bad arguments exit 254 and a node that dies outside the kill nemesis 255.
expect 254 bad-argument-node-count -w lease --node-count 0
expect 254 bad-argument-time-limit -w lease --time-limit 2.5
printf -- '--- node-exits\n'
set +e
"$bin/maelstrom" test -w echo --bin /bin/false --node-count 1 --time-limit 1 --store "$store/false" > "$store/false.log" 2>&1
got=$?
set -e
[ "$got" -eq 255 ] || { echo "a node that exits at once: exit $got, want 255" >&2; cat "$store/false.log" >&2; exit 1; }
echo "ok: a node that exits at once exited 255 as expected"
