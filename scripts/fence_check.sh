#!/usr/bin/env bash
# The end-to-end test of holders and storage (contract section 3):
# 3 `lease-node serve` members on loopback (scripts/cluster.sh), the
# example chunk server (examples/chunkserver, behind package fence) and 5
# holder processes that compete for one chunk with client.Session and
# write through the chunk server with Session.Act and the token. Faults,
# one at a time: a holder SIGSTOPped longer than the lease, a holder
# stopped between its check and its write, a member SIGSTOPped, a member
# killed and restarted, a holder cut off from the members (each holder
# reaches the members through loopback proxies the test runs, and a cut
# proxy passes nothing until it heals). It checks, on CLOCK_MONOTONIC,
# that no two holders' checked-valid intervals overlap and that the
# chunk server never accepted a token below one it had accepted; then
# its negative control, the same holders acting on Done alone against the
# chunk server with its check off, must be caught. scripts/fencecheck
# (`go doc ./scripts/fencecheck`) does the work; the logs stay in
# store/fence-check/ for inspection.
#
# Usage: scripts/fence_check.sh [fencecheck run flags, e.g. -duration 60s -seed S]
# Last line: fence: holders=H sessions=S writes=W refused=R stale-accepted=0 overlaps=0 negative-control=caught
# Exit status 0 when that holds, 1 otherwise. About 90 s on 2 cores
# (builds included); fencecheck gives up after 170 s (-deadline). It
# stops everything it started, by PID, on SIGINT or SIGTERM too; if it
# was killed outright, the next run first stops the members it left.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$PWD/store/fence-check
if [ -f "$work/cluster/pids" ]; then
  CLUSTER_STATE_DIR=$work/cluster scripts/cluster.sh down >/dev/null || true
fi
rm -rf "$work" && mkdir -p "$work/bin"
go build -o "$work/bin/chunkserver" ./examples/chunkserver
go build -o "$work/bin/fencecheck" ./scripts/fencecheck
exec "$work/bin/fencecheck" run -repo "$PWD" -chunkserver "$work/bin/chunkserver" -work "$work" "$@"
