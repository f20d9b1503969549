#!/usr/bin/env bash
# The project's test command (CI runs it through .ci/run on a fresh clone).
# Each step prints its name and the elapsed time as it starts, and a line
# every 20 s while it runs; any failing step stops the script with a
# non-zero status and names the step. The Go test summary is go test's own
# output. Runs kept for inspection: store/checks/ (the harness checks) and
# their screenshots, when Chromium is installed (scripts/setup_browser.sh).
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

# Tests that fail against real members for a known reason, skipped there
# until it is gone. TestContractLeaseLifecycle asserts contract rule 6 as
# updated (a release with token t ends every instance of the server with
# a token <= t); the core that does it is on its way: remove it from this
# list when it is merged.
real_known_failing='^TestContractLeaseLifecycle$'

# real_members_tests: the client's contract tests and leasectl's real_test.go
# against 3 `lease-node serve` processes (scripts/cluster.sh, peer TLS,
# loopback); the cluster is stopped whether they pass or not.
real_members_tests() {
  local out status=0
  real_cluster=$(mktemp -d)
  out=$(CLUSTER_STATE_DIR=$real_cluster scripts/cluster.sh up 3 -max-lease-ms 10000) || { echo "$out"; fail "scripts/cluster.sh up"; }
  echo "${out##*$'\n'}"
  CHUNKLEASE_TEST_ENDPOINTS=${out##*ENDPOINTS=} go test -count=1 -skip "$real_known_failing" ./client ./cmd/leasectl || status=$?
  stop_real_cluster
  [ "$status" -eq 0 ] || fail "the client or leasectl against real members (exit status $status)"
}

# check_report_negative_control: a copy of a good report, broken three
# ways (no legend on the timeline, a console error on the index, a dead
# link), must be rejected, each way named.
check_report_negative_control() {
  local broken
  broken=$(mktemp -d)
  cp -rL store/checks/lease-5-nodes-partitions/latest/. "$broken/"
  rm -rf "$broken/screenshots" "$broken/rate.png"
  sed -i 's/class="legend"/class="gone"/' "$broken/lease-timeline.html"
  sed -i 's|</body>|<script>console.error("broken on purpose")</script></body>|' "$broken/index.html"
  if scripts/check_report.sh "$broken" >"$broken.log" 2>&1; then
    cat "$broken.log"
    fail "check_report.sh passed a broken report (its negative control)"
  fi
  for want in "the legend: found 0" "console messages" "links rate.png, which does not exist"; do
    grep -q "$want" "$broken.log" || { cat "$broken.log"; fail "check_report.sh did not report \"$want\" on a broken report"; }
  done
  echo "negative control: check_report.sh rejected a broken report (no legend, a console error, a dead link)"
  rm -rf "$broken" "$broken.log"
}

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
[ -z "$unformatted" ] || fail "gofmt would change: $unformatted"

step "go vet"
go vet ./...

step "go test -race (unit, transcript and node tests, simulation at its race budget)"
go test -race -count=1 ./...

step "client and leasectl against 3 real serve members (scripts/cluster.sh up; always down after)"
real_members_tests

step "benchnet, the network benchmark's own module: go vet and its unit tests"
(cd benchnet && go vet ./... && go test -count=1 ./...)

step "lease simulation, full budget without the race detector"
go test -count=1 -run 'TestSimulation|TestNegativeControls' -v ./lease/ | grep -E '^(lease-sim|--- |ok|FAIL|PASS)'

step "harness runs against the node (runs kept in store/checks/)"
scripts/harness_checks.sh

step "report pages in a browser"
if command -v chromium >/dev/null 2>&1 || [ -n "${CHROMIUM:-}" ]; then
  scripts/check_report.sh store/checks/lease-5-nodes-partitions/latest \
    store/checks/negative-control-acceptors-self/latest
  check_report_negative_control
else
  echo "SKIP report pages in a browser: chromium is not installed (scripts/setup_browser.sh installs it)"
fi

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
