#!/usr/bin/env bash
# Runs the shell blocks of README.md and of every docs/*.md page as a
# newcomer would: each in its own fresh clone of the committed HEAD (so a
# block that relies on an earlier one fails here too), with bash -e, and
# checks that it exits as the page says. Every ```sh block must be preceded
# by a directive line:
#   <!-- check: expect N -->         run it; it must exit N
#   <!-- check: slow expect N -->    the same, only with --all (over a minute)
#   <!-- check: skip REASON -->      never run here (e.g. needs Maelstrom)
# Usage: scripts/check_readme.sh [--all] [PAGE.md ...]
#   With no PAGE, every page: README.md, then docs/*.md, as committed.
# Exit status: 0 every block run exited as documented, 1 otherwise.
# CHECK_README_FROM=FILE checks FILE's blocks instead of the committed
# pages (the checker's own negative control uses it).
set -euo pipefail
cd "$(dirname "$0")/.."
all=false
if [ "${1:-}" = "--all" ]; then all=true; shift; fi
repo=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "${CHECK_README_FROM:-}" ]; then
  pages=("$CHECK_README_FROM")
elif [ $# -gt 0 ]; then
  pages=("$@")
else
  mapfile -t pages < <(echo README.md; git ls-tree --name-only HEAD docs/ | grep '\.md$')
fi

# page_text PAGE prints the page as committed (or the file itself for
# CHECK_README_FROM).
page_text() {
  if [ -n "${CHECK_README_FROM:-}" ]; then
    cat "$1"
  elif ! git show "HEAD:$1" 2>/dev/null; then
    echo "check_readme: $1 is not a committed file" >&2
    return 1
  fi
}

# split_page PAGE DIR writes PAGE's blocks into DIR/N.sh, with the directive in
# N.directive and the line number in N.line.
split_page() {
  page_text "$1" | awk -v out="$2" '
    /^<!-- check: .* -->$/ { directive = $0; sub(/^<!-- check: /, "", directive); sub(/ -->$/, "", directive); next }
    /^```sh$/ && !inblock { inblock = 1; n++; file = out "/" n; print directive > (file ".directive"); print NR > (file ".line"); printf "" > (file ".sh"); directive = ""; next }
    /^```/ && inblock { inblock = 0; next }
    inblock { print > (file ".sh"); next }
    /^```/ { directive = "" }
  '
}

failures=0 ran=0 skipped=0
# check_block PAGE N runs block N of PAGE (already split into $dir).
check_block() {
  local page=$1 n=$2 line directive first want clone start status
  line=$(cat "$n.line")
  directive=$(cat "$n.directive")
  first=$(head -n 1 "$n.sh")
  case "$directive" in
    "skip "*)
      printf 'SKIP  %s line %s: %s  (%s)\n' "$page" "$line" "$first" "${directive#skip }"
      skipped=$((skipped + 1)); return ;;
    "slow expect "*)
      if ! $all; then
        printf 'SKIP  %s line %s: %s  (over a minute; --all runs it)\n' "$page" "$line" "$first"
        skipped=$((skipped + 1)); return
      fi
      want=${directive#slow expect } ;;
    "expect "*) want=${directive#expect } ;;
    *)
      printf 'FAIL  %s line %s: a sh block without a <!-- check: ... --> directive\n' "$page" "$line"
      failures=$((failures + 1)); return ;;
  esac
  clone="$tmp/clone"
  rm -rf "$clone"
  git clone -q "$repo" "$clone"
  start=$SECONDS
  status=0
  (cd "$clone" && timeout 600 bash -e "$n.sh") >"$n.log" 2>&1 || status=$?
  ran=$((ran + 1))
  if [ "$status" = "$want" ]; then
    printf 'ok    %s line %s: %s  (exit %s as documented, %ds)\n' "$page" "$line" "$first" "$status" $((SECONDS - start))
  else
    printf 'FAIL  %s line %s: %s  exited %s, the page says %s; its output ends:\n' "$page" "$line" "$first" "$status" "$want"
    tail -n 15 "$n.log" | sed 's/^/      /'
    failures=$((failures + 1))
  fi
  rm -rf "$clone"
}

p=0
for page in "${pages[@]}"; do
  p=$((p + 1))
  dir="$tmp/page-$p"
  mkdir -p "$dir"
  if ! split_page "$page" "$dir"; then
    failures=$((failures + 1)); continue
  fi
  for n in $(ls "$dir" | sed -n 's/\.sh$//p' | sort -n); do
    check_block "$page" "$dir/$n"
  done
done
printf 'check_readme: %d pages, %d blocks run, %d skipped, %d failed\n' "${#pages[@]}" "$ran" "$skipped" "$failures"
[ "$failures" -eq 0 ]
