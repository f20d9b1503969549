#!/usr/bin/env bash
# The project's test command (CI runs it through .ci/run on a fresh clone).
# Each step prints its name and the elapsed time as it starts, and a line
# every 20 s while it runs; any failing step stops the script with a
# non-zero status and names the step. The Go test summary is go test's own
# output. Runs kept for inspection: store/checks/ (the harness checks) and
# their screenshots. Chromium is installed (scripts/setup_browser.sh) when
# it is missing; the script fails if it cannot be.
set -euo pipefail
cd "$(dirname "$0")/.."

t0=$SECONDS
current="start"
heartbeat=""
elapsed() { local s=$((SECONDS - t0)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
stop_heartbeat() {
  if [ -n "$heartbeat" ]; then kill "$heartbeat" 2>/dev/null || true; wait "$heartbeat" 2>/dev/null || true; fi
  heartbeat=""
}
step() {
  stop_heartbeat
  current="$*"
  printf '\n=== [%s] %s\n' "$(elapsed)" "$current"
  local started=$SECONDS name="$current"
  ( while sleep 20; do printf '    ... [%s] still running: %s (%ds in this step)\n' "$(elapsed)" "$name" $((SECONDS - started)); done ) &
  heartbeat=$!
}
fail() { stop_heartbeat; printf '\nFAILED after %s: %s\n' "$(elapsed)" "$*" >&2; exit 1; }
trap 'fail "step \"$current\" (exit status $?)"' ERR
# real_cluster: the state directory of the cluster of real members that
# a step runs, so that the EXIT trap stops it whatever happens.
real_cluster=""
stop_real_cluster() {
  if [ -n "$real_cluster" ]; then
    CLUSTER_STATE_DIR=$real_cluster scripts/cluster.sh down >/dev/null || true
    rm -rf "$real_cluster"
    real_cluster=""
  fi
}
trap 'stop_heartbeat; stop_real_cluster' EXIT

# real_members_tests: the client's contract tests and leasectl's real_test.go
# against 3 `lease-node serve` processes (scripts/cluster.sh, peer TLS,
# loopback); the cluster is stopped whether they pass or not.
real_members_tests() {
  local out status=0
  real_cluster=$(mktemp -d)
  out=$(CLUSTER_STATE_DIR=$real_cluster scripts/cluster.sh up 3 -max-lease-ms 10000) || { echo "$out"; fail "scripts/cluster.sh up"; }
  echo "${out##*$'\n'}"
  CHUNKLEASE_TEST_ENDPOINTS=${out##*ENDPOINTS=} go test -count=1 ./client ./cmd/leasectl || status=$?
  stop_real_cluster
  [ "$status" -eq 0 ] || fail "the client or leasectl against real members (exit status $status)"
}

# broken_copy RUN NAME: a copy of a kept run at $broken/NAME/run/latest,
# with the harness's output beside it ($broken/NAME/run.log), as
# check_report.sh finds it.
broken_copy() {
  local to="$broken/$2/run"
  mkdir -p "$to"
  cp -rL "store/checks/$1/latest/." "$to/latest/"
  cp "store/checks/$1.log" "$to.log"
  rm -rf "$to/latest/screenshots"
  echo "$to/latest"
}

# check_report_negative_control: copies of good reports, each broken in
# ways check_report.sh must name: a valid lease run (no legend on the
# timeline, a console error on the index, a dead link, every fault band
# showing its longest label however narrow, no legend on the message
# diagram, a lease_grant label cut before server=), the LEASE_ACCEPTORS=
# self lease run (overlapping holdings drawn in one row, the index's
# first violation without its nodes, the console's first violation
# gone) and the master one (no legend on the master timeline, no first
# violation on the index).
check_report_negative_control() {
  local broken valid invalid master want
  broken=$(mktemp -d)
  valid=$(broken_copy lease-5-nodes-partitions valid)
  rm -f "$valid/rate.png"
  sed -i 's/class="legend"/class="gone"/' "$valid/lease-timeline.html"
  sed -i 's|</head>|<style>.fl{display:block !important}</style></head>|' "$valid/lease-timeline.html"
  sed -i 's|</body>|<script>console.error("broken on purpose")</script></body>|' "$valid/index.html"
  sed -i 's/class="legend"/class="gone"/; 0,/>lease_grant server=[^ <]*/s//>lease_grant …/' "$valid/messages.svg"
  invalid=$(broken_copy negative-control-acceptors-self invalid)
  sed -i -E 's/(class="h [^"]*"[^>]*top:)[0-9]+px/\15px/g' "$invalid/lease-timeline.html"
  sed -i -E 's/ via n[0-9]+//g' "$invalid/index.html"
  sed -i '/^  the first: /d' "$(dirname "$invalid").log"
  master=$(broken_copy negative-control-master-acceptors-self master)
  sed -i 's/class="legend"/class="gone"/' "$master/master-timeline.html"
  sed -i 's/id="first-violation"/id="gone"/' "$master/index.html"
  if scripts/check_report.sh "$valid" "$invalid" "$master" >"$broken/log" 2>&1; then
    cat "$broken/log"
    fail "check_report.sh passed a broken report (its negative control)"
  fi
  for want in "lease-timeline.html: the legend: found 0" "console messages" "links rate.png, which does not exist" \
    "fault labels wider than their band" "messages.svg: the legend of the arrows: found 0" "a lease_grant label without server=" \
    "are not drawn side by side" "index.html's first violation: ops without the node that answered them" \
    "): no first violation" "master-timeline.html: the legend: found 0" "index.html: no first violation"; do
    grep -q -- "$want" "$broken/log" || { cat "$broken/log"; fail "check_report.sh did not report \"$want\" on a broken report"; }
  done
  echo "negative control: check_report.sh rejected broken reports in each of 11 ways (legend, console error, dead link, clipped fault labels, diagram legend, cut label, stacked holdings, nodes missing, console, master legend, master first violation)"
  rm -rf "$broken"
}

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
[ -z "$unformatted" ] || fail "gofmt would change: $unformatted"

step "go vet"
go vet ./...

step "tools for the real-network tests: ip, tc, nft (scripts/setup_netns.sh installs what is missing)"
# The realnet and netns Go tests compare the root namespace's rules and
# qdiscs before and after a lab, so the tools must be there before go test.
if [ "$(id -u)" -eq 0 ]; then
  scripts/setup_netns.sh || fail "scripts/setup_netns.sh could not install ip, tc and nft; the real-network tests need them"
else
  echo "not root: the real-network tests skip themselves, so their tools are not installed"
fi

step "go test -race (unit, transcript and node tests, simulation at its race budget)"
# -timeout: the slowest package (simnet) took 8.6 to 10 minutes beside two
# busy loops (at load 15 to 28), past go test's default of 10 a package.
go test -race -count=1 -timeout 30m ./...

step "client and leasectl against 3 real serve members (scripts/cluster.sh up; always down after)"
real_members_tests

step "holders and storage end to end: scripts/fence_check.sh (3 serve members, 5 holders, the example chunk server, faults; about 100 s)"
scripts/fence_check.sh || fail "scripts/fence_check.sh"

step "abuse check, short form: slowloris, a greedy client and silent connects against a member while a well-behaved client calls (scripts/abuse_check.sh --short), and its negative control"
scripts/abuse_check.sh --short || fail "scripts/abuse_check.sh --short: the well-behaved client was not served (its last line says how)"
control=$(go run ./scripts/abusecheck -control -slowloris 0 -greedy 0 -churn 0 -calls 20 -min-ok 19 -warmup 0s 2>&1) && {
  echo "$control"
  fail "the abuse check passed against a listener that closes every connection unanswered (its negative control)"
}
echo "${control##*$'\n'}"
grep -q "resets-to-well-behaved=[1-9]" <<<"$control" || { echo "$control"; fail "the abuse check's negative control did not count the resets"; }
echo "negative control: the abuse check failed against a listener that closes every connection unanswered"

step "membership on 3 real serve members: replace a dead n3 by n4 under 8 Sessions (scripts/member_check.sh, about 20 s)"
scripts/member_check.sh

step "benchnet, the network benchmark's own module: go vet and its unit tests"
(cd benchnet && go vet ./... && go test -count=1 ./...)

step "lease simulation, full budget without the race detector"
go test -count=1 -run 'TestSimulation|TestNegativeControls' -v ./lease/ | grep -E '^(lease-sim|--- |ok|FAIL|PASS)'

step "harness runs against the node (runs kept in store/checks/)"
scripts/harness_checks.sh

step "real network (--network netns, root): a short lease run under every fault including clock, and its negative controls (about 75 s)"
scripts/netns_checks.sh

step "Chromium for the report pages (scripts/setup_browser.sh when it is missing)"
if [ -z "${CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  # About 25 s on the project's machine (155 MB from Debian's mirrors).
  scripts/setup_browser.sh || fail "Chromium is missing and scripts/setup_browser.sh could not install it (it needs root or sudo, and apt); the report pages cannot be checked"
fi
echo "browser: $("${CHROMIUM:-chromium}" --version 2>/dev/null)"

step "report pages in a browser"
scripts/check_report.sh store/checks/lease-5-nodes-partitions/latest \
  store/checks/acceptance-partition-kill-pause-clock/latest \
  store/checks/negative-control-acceptors-self/latest \
  store/checks/master-5-nodes-partitions/latest \
  store/checks/negative-control-master-acceptors-self/latest
check_report_negative_control

step "README checker: its negative control (scripts/check_readme.sh itself runs the README's blocks)"
lying=$(mktemp)
printf '<!-- check: expect 0 -->\n```sh\nexit 3\n```\n\n```sh\necho no directive\n```\n' >"$lying"
if CHECK_README_FROM="$lying" scripts/check_readme.sh >"$lying.log" 2>&1 || ! grep -q '2 failed' "$lying.log"; then
  cat "$lying.log"
  fail "check_readme.sh did not reject a block with the wrong exit status and a block without a directive"
fi
echo "negative control: check_readme.sh rejected a wrong exit status and a block without a directive"
rm -f "$lying" "$lying.log"

stop_heartbeat
printf '\nALL CHECKS PASSED in %s\n' "$(elapsed)"
