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
trap 'stop_heartbeat' EXIT

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

step "lease simulation, full budget without the race detector"
go test -count=1 -run 'TestSimulation|TestNegativeControls' -v ./lease/ | grep -E '^(lease-sim|--- |ok|FAIL|PASS)'

step "harness runs against the node (runs kept in store/checks/)"
scripts/harness_checks.sh

step "real network (--network netns, root): a short lease run under every fault, and its negative control (about 60 s)"
scripts/netns_checks.sh

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
