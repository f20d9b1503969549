#!/usr/bin/env bash
# compare_stores.sh BASE_BIN NEW_BIN [STORE ...]
#
# Proves that two builds of the harness judge and report the same stored
# runs alike: every run directory under each STORE (default store/checks,
# as scripts/harness_checks.sh leaves it) is copied twice, each copy is
# analysed again (`maelstrom analyze RUN_DIR`) by one build, and the two
# copies are compared file by file, with what depends on the moment
# taken out: results.json without "timing" and "memory", index.html
# without its analysis row (seconds and peak memory), and the summary
# either build printed without its analysis line. Everything else must be
# byte for byte the same: results.json, lease-details.jsonl,
# lease-timeline.html, latency-raw.png, rate.png, messages.svg (the run's,
# kept by analyze), index.html, the exit status. Real-time runs are not
# reproducible, but the same stored history is: this is how a reshape of
# the code shows that it changed no verdict and no report.
#
# BASE_BIN and NEW_BIN are maelstrom binaries (build the base from a
# temporary `git worktree add`). Prints the diff (empty when the builds
# agree) and one line per run; exits 1 when any run differs.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BASE_BIN NEW_BIN [STORE ...]" >&2
  exit 2
fi
base_bin=$(realpath "$1") new_bin=$(realpath "$2")
shift 2
stores=("$@")
[ ${#stores[@]} -gt 0 ] || stores=(store/checks)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# outputs are the files analyze writes again: removed from each copy
# first, so that a file one build no longer writes shows up as missing.
outputs=(index.html latency-raw.png rate.png lease-details.jsonl lease-timeline.html)

# analyse BIN RUN_DIR OUT: a copy of RUN_DIR in OUT, analysed by BIN,
# normalised for the comparison.
analyse() {
  local bin=$1 run=$2 out=$3 status=0
  cp -r "$run" "$out"
  for f in "${outputs[@]}"; do rm -f "$out/$f"; done
  "$bin" analyze "$out" >"$out/.summary" 2>&1 || status=$?
  echo "$status" >"$out/.exit"
  sed -i -e '/^  analysis: /d' -e "s|$out|RUN_DIR|g" "$out/.summary"
  if [ -f "$out/results.json" ]; then
    jq -S 'del(.timing, .memory)' "$out/results.json" >"$out/results.normalised.json"
    rm "$out/results.json"
  fi
  [ ! -f "$out/index.html" ] || sed -i '/^<tr><th>analysis<\/th>/d' "$out/index.html"
}

runs=0 differ=0
for store in "${stores[@]}"; do
  while IFS= read -r hist; do
    run=$(dirname "$hist")
    [ -f "$run/results.json" ] || continue
    runs=$((runs + 1))
    name=$(echo "${run#"$store"/}" | tr '/' '_')
    analyse "$base_bin" "$run" "$work/base-$name"
    analyse "$new_bin" "$run" "$work/new-$name"
    if diff -r "$work/base-$name" "$work/new-$name"; then
      printf 'same: %s (exit %s)\n' "$run" "$(cat "$work/new-$name/.exit")"
    else
      printf 'DIFFERENT: %s\n' "$run"
      differ=$((differ + 1))
    fi
  done < <(find "${store}" -name history.jsonl -not -path '*/latest/*' -not -path '*/current/*' | sort)
done

if [ "$runs" -eq 0 ]; then
  echo "compare_stores: no stored run under ${stores[*]}" >&2
  exit 2
fi
echo "compare_stores: $runs runs analysed by both builds, $differ different"
[ "$differ" -eq 0 ]
