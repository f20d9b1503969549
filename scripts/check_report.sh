#!/usr/bin/env bash
# Opens a run's report pages in headless Chromium and checks what a person
# would see: index.html, lease-timeline.html (lease runs) and messages.svg
# (not for the real network, "network": "netns", which draws none)
# must load with no console message (the pages have no script, so any is
# an error), show their parts (the verdict and figures; lanes, both time
# axes, ticks and the legend; the diagram's panels and columns), and link
# only files that exist. A screenshot of each page goes into the run's
# screenshots/ folder.
#
# Usage: scripts/check_report.sh [RUN_DIR ...]    (default: store/latest)
# Exit status: 0 every page passed, 1 some check failed, 2 no Chromium
# (scripts/setup_browser.sh installs it; CHROMIUM=/path picks another).
set -euo pipefail
cd "$(dirname "$0")/.."

browser=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$browser" ]; then
  echo "check_report: Chromium is not installed (scripts/setup_browser.sh installs it)" >&2
  exit 2
fi
[ $# -gt 0 ] || set -- store/latest
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() { echo "  FAIL $*"; failures=$((failures + 1)); }

# open_page DIR PAGE WIDTH,HEIGHT: loads the page once, keeps the DOM as
# Chromium built it in $tmp/dom, its log in $tmp/log, and a screenshot.
open_page() {
  local dir=$1 page=$2 size=$3
  rm -rf "$tmp/profile"
  if ! timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 --hide-scrollbars \
    --window-size="$size" --screenshot="$dir/screenshots/${page%.*}.png" --dump-dom \
    "file://$dir/$page" >"$tmp/dom" 2>"$tmp/log"; then
    fail "$page: Chromium could not open it; its log: $tmp/log"
    cat "$tmp/log" >&2
    return 1
  fi
  if grep -q 'CONSOLE' "$tmp/log"; then
    fail "$page: console messages:"
    grep 'CONSOLE' "$tmp/log" | sed 's/^/      /'
  fi
  [ -s "$dir/screenshots/${page%.*}.png" ] || fail "$page: no screenshot was written"
}

# need PAGE WHAT MIN PATTERN: the DOM holds at least MIN matches.
need() {
  local page=$1 what=$2 want=$3 pattern=$4 got
  got=$({ grep -oE "$pattern" "$tmp/dom" || true; } | wc -l)
  if [ "$got" -lt "$want" ]; then
    fail "$page: $what: found $got, want at least $want (pattern $pattern)"
  fi
}

# links PAGE DIR: every relative href and src in the DOM names a file.
links() {
  local page=$1 dir=$2 target
  { grep -oE '(href|src)="[^"#][^"]*"' "$tmp/dom" || true; } | sed -E 's/^[a-z]+="//; s/"$//' | sort -u | while read -r target; do
    case "$target" in
      http:* | https:* | //*) echo "  FAIL $page links outside the run: $target" ;;
      *) [ -e "$dir/$target" ] || echo "  FAIL $page links $target, which does not exist" ;;
    esac
  done >"$tmp/links"
  if [ -s "$tmp/links" ]; then
    cat "$tmp/links"
    failures=$((failures + $(wc -l <"$tmp/links")))
  fi
}

check_run() {
  local dir
  dir=$(cd "$1" && pwd -P) || { fail "$1: no such run directory"; return; }
  echo "--- $1 ($dir)"
  local f workload network diagram=messages.svg
  network=$(grep -m1 -oE '"network": *"[^"]*"' "$dir/results.json" | sed -E 's/.*"([^"]*)"$/\1/')
  # The real network carries no journal to draw messages from.
  [ "$network" != netns ] || diagram=""
  for f in history.jsonl results.json index.html $diagram latency-raw.png rate.png; do
    [ -s "$dir/$f" ] || fail "$f is missing"
  done
  workload=$(grep -m1 -oE '"workload": *"[^"]*"' "$dir/results.json" | sed -E 's/.*"([^"]*)"$/\1/')
  mkdir -p "$dir/screenshots"

  if open_page "$dir" index.html 1300,1400; then
    need index.html "the verdict" 1 'id="verdict"'
    need index.html "the figures table" 1 'class="figures"'
    need index.html "links to the run's files" 5 '<li><a href='
    links index.html "$dir"
  fi
  if [ "$workload" = lease ] && [ -s "$dir/lease-timeline.html" ]; then
    if open_page "$dir" lease-timeline.html 1400,1000; then
      need lease-timeline.html "the summary" 1 'id="summary"'
      need lease-timeline.html "the legend" 1 'class="legend"'
      need lease-timeline.html "the top and bottom time axes" 2 'class="row axis (top|bottom)"'
      need lease-timeline.html "time ticks" 4 'class="tick"'
      if ! grep -q '>0 chunks,\| 0 chunks,' "$tmp/dom"; then
        need lease-timeline.html "chunk lanes" 1 'class="row lane( violating)?"'
        need lease-timeline.html "holding bars" 1 'class="h s[0-9]+"'
      fi
      if grep -qE '[1-9][0-9]* violations,' "$tmp/dom"; then
        need lease-timeline.html "lanes of the violations" 1 'class="row lane violating"'
        need lease-timeline.html "links to the violations' lanes" 1 'href="#lane-[0-9]+"'
      fi
      links lease-timeline.html "$dir"
    fi
  fi
  if [ -n "$diagram" ] && open_page "$dir" messages.svg 1400,1200; then
    need messages.svg "diagram panels" 1 'class="panel"'
    need messages.svg "columns" 2 'class="col"'
  fi
  echo "  screenshots: $(cd "$dir/screenshots" && echo *.png)"
}

for run in "$@"; do
  check_run "$run"
done
if [ "$failures" -gt 0 ]; then
  echo "check_report: $failures problem(s) found" >&2
  exit 1
fi
echo "check_report: every page passed"
