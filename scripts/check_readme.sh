#!/usr/bin/env bash
# Runs the shell blocks of README.md as a newcomer would: each in its own
# fresh clone of the committed HEAD (so a block that relies on an earlier
# one fails here too), with bash -e, and checks that it exits as the README
# says. Every ```sh block must be preceded by a directive line:
#   <!-- check: expect N -->         run it; it must exit N
#   <!-- check: slow expect N -->    the same, only with --all (over a minute)
#   <!-- check: skip REASON -->      never run here (e.g. needs Maelstrom)
# Usage: scripts/check_readme.sh [--all]
# Exit status: 0 every block run exited as documented, 1 otherwise.
# CHECK_README_FROM=FILE checks FILE's blocks instead of the committed
# README.md (the checker's own negative control uses it).
set -euo pipefail
cd "$(dirname "$0")/.."
all=false
[ "${1:-}" = "--all" ] && all=true
repo=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/blocks"

# Split README.md into blocks/N.sh, with the directive in N.directive and
# the line number in N.line.
if [ -n "${CHECK_README_FROM:-}" ]; then cat "$CHECK_README_FROM"; else git show HEAD:README.md; fi | awk -v out="$tmp/blocks" '
  /^<!-- check: .* -->$/ { directive = $0; sub(/^<!-- check: /, "", directive); sub(/ -->$/, "", directive); next }
  /^```sh$/ && !inblock { inblock = 1; n++; file = out "/" n; print directive > (file ".directive"); print NR > (file ".line"); printf "" > (file ".sh"); directive = ""; next }
  /^```/ && inblock { inblock = 0; next }
  inblock { print > (file ".sh"); next }
  /^```/ { directive = "" }
'

failures=0 ran=0 skipped=0
for sh in $(ls "$tmp"/blocks/*.sh | sort -t/ -k"$(echo "$tmp/blocks/" | tr -cd / | wc -c | awk '{print $1+1}')" -n); do
  n=${sh%.sh}
  line=$(cat "$n.line")
  directive=$(cat "$n.directive")
  first=$(head -n 1 "$sh")
  case "$directive" in
    "skip "*)
      printf 'SKIP  README line %s: %s  (%s)\n' "$line" "$first" "${directive#skip }"
      skipped=$((skipped + 1)); continue ;;
    "slow expect "*)
      if ! $all; then
        printf 'SKIP  README line %s: %s  (over a minute; --all runs it)\n' "$line" "$first"
        skipped=$((skipped + 1)); continue
      fi
      want=${directive#slow expect } ;;
    "expect "*) want=${directive#expect } ;;
    *)
      printf 'FAIL  README line %s: a sh block without a <!-- check: ... --> directive\n' "$line"
      failures=$((failures + 1)); continue ;;
  esac
  clone="$tmp/clone-$(basename "$n")"
  git clone -q "$repo" "$clone"
  start=$SECONDS
  status=0
  (cd "$clone" && timeout 600 bash -e "$sh") >"$n.log" 2>&1 || status=$?
  ran=$((ran + 1))
  if [ "$status" = "$want" ]; then
    printf 'ok    README line %s: %s  (exit %s as documented, %ds)\n' "$line" "$first" "$status" $((SECONDS - start))
  else
    printf 'FAIL  README line %s: %s  exited %s, the README says %s; its output ends:\n' "$line" "$first" "$status" "$want"
    tail -n 15 "$n.log" | sed 's/^/      /'
    failures=$((failures + 1))
  fi
  rm -rf "$clone"
done
printf 'check_readme: %d blocks run, %d skipped, %d failed\n' "$ran" "$skipped" "$failures"
[ "$failures" -eq 0 ]
