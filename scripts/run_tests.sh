#!/usr/bin/env bash
# The project's test command (CI runs it through .ci/run on a fresh clone).
# It prints the Go test summary and fails loudly: any failing step stops the
# script with a non-zero status and says which step failed.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n=== %s\n' "$*"; }
fail() { printf '\nFAILED: %s\n' "$*" >&2; exit 1; }
trap 'fail "step \"$current\" (exit status $?)"' ERR

current="gofmt"; step "$current"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
[ -z "$unformatted" ] || fail "gofmt would change: $unformatted"

current="go vet"; step "$current"
go vet ./...

current="go test -race (unit, transcript and node tests, simulation at its race budget)"; step "$current"
go test -race -count=1 ./...

current="lease simulation, full budget without the race detector"; step "$current"
go test -count=1 -run 'TestSimulation|TestNegativeControls' -v ./lease/ | grep -E '^(lease-sim|--- |ok|FAIL|PASS)'

current="harness runs against the node"; step "$current"
scripts/harness_checks.sh

printf '\nALL CHECKS PASSED\n'
