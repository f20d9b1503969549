#!/usr/bin/env bash
# Opens a run's report pages in headless Chromium and checks what a person
# would see. Every page must load with no console message (the pages have
# no script, so any is an error), show its parts and link only files that
# exist; a screenshot of each goes into the run's screenshots/ folder.
#
#   index.html           the verdict, the figures, links; for an invalid
#                        lease or master run the violation count and the
#                        first violation, naming the node of every op
#   lease-timeline.html  (lease runs) the summary, legend, both axes,
#                        ticks, lanes and bars; violations listed with a
#                        node for every op and linked to their lanes; and,
#                        measured in the laid-out page (a copy with a probe
#                        script; the page itself has none), each listed
#                        two-primaries violation's two holdings drawn side
#                        by side: bars of two servers in two colours that
#                        overlap in time, one above the other in the same
#                        lane; no fault label wider than its band
#   master-timeline.html (master runs) the same frame: one lane per node,
#                        legend, axes, ticks, bars; for an invalid run the
#                        violations listed with their nodes and each of
#                        the first violation's two nodes with a bar under
#                        a violation mark of its own lane
#   messages.svg         (not for the real network, "network": "netns",
#                        which draws none) panels, columns, the legend of
#                        the arrows; every
#                        lease_grant and lease_renew label shows server=,
#                        every lease_grant_ok label primary= (un-cut); for
#                        an invalid lease run the violation's ops marked
#   the console          for an invalid lease or master run, when the
#                        harness's output was kept beside the run's store
#                        (STORE.log for STORE/latest, as
#                        scripts/harness_checks.sh keeps it): the violation
#                        count by kind and the first violation, naming the
#                        node of every op
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

# chromium FILE_URL DOM_OUT LOG_OUT [SCREENSHOT WIDTH,HEIGHT]: loads a page
# once and keeps the DOM as Chromium built it.
chromium() {
  local url=$1 dom=$2 log=$3 shot=${4:-} size=${5:-1400,1000}
  local args=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
    --disable-background-networking --disable-component-update --disable-sync
    --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 --hide-scrollbars
    --window-size="$size" --dump-dom)
  [ -z "$shot" ] || args+=(--screenshot="$shot")
  rm -rf "$tmp/profile"
  timeout 120 "$browser" "${args[@]}" "$url" >"$dom" 2>"$log"
}

# open_page DIR PAGE WIDTH,HEIGHT: loads the page, keeps its DOM in
# $tmp/dom, its log in $tmp/log, and a screenshot.
open_page() {
  local dir=$1 page=$2 size=$3
  if ! chromium "file://$dir/$page" "$tmp/dom" "$tmp/log" "$dir/screenshots/${page%.*}.png" "$size"; then
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

# py CHECK [ARGS...]: runs one of the Python checks below on $tmp/dom (or
# the files named); each prints one FAIL line per problem, or nothing.
py() {
  local out
  out=$(python3 "$tmp/checks.py" "$@" <"$tmp/dom" 2>&1) || true
  { echo "$out" | grep '^INFO ' || true; } | sed 's/^INFO /  /'
  out=$(echo "$out" | grep -v '^INFO ' || true)
  if [ -n "$out" ]; then
    echo "$out" | sed 's/^/  FAIL /'
    failures=$((failures + $(echo "$out" | wc -l)))
  fi
}

cat >"$tmp/checks.py" <<'EOF'
import html, json, re, sys

OPS = re.compile(r"ops (\d+)-(\d+)( via [A-Za-z0-9_.-]+)?")

def unnamed(text):
    """The op references in text that name no node."""
    return [m.group(0) for m in OPS.finditer(text) if not m.group(3)]

def nodes_named(where, texts):
    """Every op a violation text names comes with the node that answered it."""
    if not texts:
        print(f"{where}: no violation text found")
    bad = []
    for t in texts:
        if not OPS.search(t):
            bad.append(f"{where}: a violation text names no op: {t[:160]}")
        elif unnamed(t):
            bad.append(f"{where}: ops without the node that answered them ({', '.join(unnamed(t))}): {t[:160]}")
    for line in bad[:3]:
        print(line)
    if len(bad) > 3:
        print(f"{where}: ... and {len(bad) - 3} more texts like these")
    if texts and not bad:
        print(f"INFO {where}: every op named with its node ({len(texts)} text(s))")

def text_of(fragment):
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))

check = sys.argv[1]
dom = sys.stdin.read()
if check == "index-violation":
    m = re.search(r'id="first-violation">(.*?)</span>', dom, re.S)
    count = re.search(r'class="count">(\d+)</span>: ([^<]*)', dom)
    if not count or int(count.group(1)) < 1 or not re.search(r"[a-z-]+ \d+", count.group(2)):
        print("index.html: no violation count by kind")
    if not m:
        print("index.html: no first violation")
    else:
        nodes_named("index.html's first violation", [text_of(m.group(1))])
elif check == "list-violations":  # PAGE: the violations listed at the top
    items = [text_of(x) for x in re.findall(r'<li class="violation"[^>]*>(.*?)</li>', dom, re.S)]
    nodes_named(sys.argv[2] + "'s violations", items)
elif check == "console":  # LOG
    log = open(sys.argv[2], errors="replace").read()
    if not re.search(r"^  violations: \d+ \([a-z-]+ \d+", log, re.M):
        print(f"console ({sys.argv[2]}): no violation count by kind")
    first = re.search(r"^  the first: (.*)$", log, re.M)
    if not first:
        print(f"console ({sys.argv[2]}): no first violation")
    else:
        nodes_named("the console's first violation", [first.group(1)])
elif check == "probe-lease":
    p = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    if not p:
        print("lease-timeline.html: the layout probe did not run")
        sys.exit()
    r = json.loads(html.unescape(p.group(1)))
    if r["clipped"]:
        print(f"lease-timeline.html: fault labels wider than their band: {r['clipped'][:5]}")
    if r["unlabelled"]:
        print(f"lease-timeline.html: {r['unlabelled']} fault band(s) at least 160 px wide show no label")
    if sys.argv[2] == "invalid":
        print(f"INFO lease-timeline.html: {r['checked'] - len(r['stacked'])} of {r['checked']} listed two-primaries violations "
              "drawn side by side (laid out by Chromium)")
        if r["checked"] == 0:
            print("lease-timeline.html: no listed two-primaries violation with both holdings drawn in its lane")
        for bad in r["stacked"][:5]:
            print(f"lease-timeline.html: the two holdings of two-primaries ops {bad} are not drawn side by side "
                  "(two servers' colours, overlapping in time, one above the other in the lane)")
elif check == "probe-master":
    p = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    if not p:
        print("master-timeline.html: the layout probe did not run")
        sys.exit()
    r = json.loads(html.unescape(p.group(1)))
    if r["clipped"]:
        print(f"master-timeline.html: fault labels wider than their band: {r['clipped'][:5]}")
    if sys.argv[2] == "invalid" and r["both"]:
        print("INFO master-timeline.html: the first violation's two nodes each show a bar under a violation mark (laid out by Chromium)")
    if sys.argv[2] == "invalid" and not r["both"]:
        print("master-timeline.html: the first violation's two nodes do not each show a bar under a violation mark "
              f"in their own lanes ({r['why']})")
elif check == "svg-labels":
    labels = [text_of(x) for x in re.findall(r'<text class="lbl"[^>]*>(.*?)</text>', dom, re.S)]
    labels = [re.sub(r"^(\[[^\]]*\] )?(c\d+: )?", "", l) for l in labels]
    for l in labels:
        kind = l.split(" ")[0]
        if kind in ("lease_grant", "lease_renew") and "server=" not in l:
            print(f"messages.svg: a {kind} label without server=: {l}")
        if kind == "lease_grant_ok" and "primary=" not in l:
            print(f"messages.svg: a lease_grant_ok label without primary=: {l}")
    if sys.argv[2] == "lease" and not any(l.startswith("lease_grant") for l in labels):
        print("messages.svg: no lease_grant label in a lease run")
EOF

# probe PAGE: a copy of the page with a script that measures the laid-out
# page and writes what it found into <pre id="probe">, loaded in $tmp;
# its DOM replaces $tmp/dom.
probe() {
  local dir=$1 page=$2
  python3 -c 'import sys; page, js = open(sys.argv[1]).read(), open(sys.argv[2]).read()
sys.stdout.write(page.replace("</body>", "<script>" + js + "</script></body>"))' "$dir/$page" "$tmp/probe.js" >"$tmp/probe-$page"
  chromium "file://$tmp/probe-$page" "$tmp/dom" "$tmp/probe.log" || fail "$page: Chromium could not open the probe copy"
}

cat >"$tmp/probe.js" <<'EOF'
(function () {
  var out = {checked: 0, stacked: [], clipped: [], unlabelled: 0, both: false, why: ""};
  var R = function (e) { return e.getBoundingClientRect(); };
  var bg = function (e) { return getComputedStyle(e).backgroundColor; };
  var overlapX = function (a, b) { return Math.min(a.right, b.right) - Math.max(a.left, b.left) > -1; };
  var inside = function (r, l) { return r.top >= l.top - 1 && r.bottom <= l.bottom + 1; };
  document.querySelectorAll('li.violation[data-kind="two-primaries"]').forEach(function (li) {
    var lane = document.getElementById(li.getAttribute("data-lane") || "-"), ops = li.getAttribute("data-ops").split(" ");
    if (!lane) return;
    var a = lane.querySelector('.h[data-op="' + ops[0] + '"]'), b = lane.querySelector('.h[data-op="' + ops[2] + '"]');
    if (!a || !b) return;
    out.checked++;
    var ra = R(a), rb = R(b), rl = R(lane);
    var ok = a.getAttribute("data-server") !== b.getAttribute("data-server") && bg(a) !== bg(b) &&
      overlapX(ra, rb) && (ra.bottom <= rb.top + 0.5 || rb.bottom <= ra.top + 0.5) &&
      ra.height >= 8 && rb.height >= 8 && ra.width >= 1 && rb.width >= 1 && inside(ra, rl) && inside(rb, rl);
    if (!ok) out.stacked.push(li.getAttribute("data-ops"));
  });
  document.querySelectorAll(".f").forEach(function (f) {
    var shown = null;
    f.querySelectorAll(".fl").forEach(function (l) { if (!shown && getComputedStyle(l).display !== "none") shown = l; });
    if (shown && shown.scrollWidth > shown.clientWidth + 1) out.clipped.push(shown.textContent);
    if (!shown && f.querySelector(".fl") && R(f).width >= 160) out.unlabelled++;
  });
  var first = document.querySelector("li.violation a[href^='#node-']");
  if (first) {
    var li = first.parentNode, found = 0;
    li.querySelectorAll("a[href^='#node-']").forEach(function (a) {
      var lane = document.getElementById(a.getAttribute("href").slice(1));
      if (!lane) { out.why += "no lane " + a.getAttribute("href") + "; "; return; }
      var marks = lane.querySelectorAll(".v"), bars = lane.querySelectorAll(".h"), hit = false;
      marks.forEach(function (m) { bars.forEach(function (h) { if (overlapX(R(m), R(h)) && R(h).width >= 1) hit = true; }); });
      if (hit) found++; else out.why += "no bar under a mark in " + a.textContent + "'s lane; ";
    });
    out.both = found >= 2;
  } else {
    out.why = "no violation linked to node lanes";
  }
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
EOF

# timeline_frame PAGE: what both timelines show.
timeline_frame() {
  local page=$1
  need "$page" "the summary" 1 'id="summary"'
  need "$page" "the legend" 1 'class="legend"'
  need "$page" "the top and bottom time axes" 2 'class="row axis (top|bottom)"'
  need "$page" "time ticks" 4 'class="tick"'
}

check_run() {
  local arg=$1 dir
  dir=$(cd "$arg" && pwd -P) || { fail "$arg: no such run directory"; return; }
  echo "--- $arg ($dir)"
  local f workload valid network diagram=messages.svg
  network=$(grep -m1 -oE '"network": *"[^"]*"' "$dir/results.json" | sed -E 's/.*"([^"]*)"$/\1/')
  # The real network carries no journal to draw messages from.
  [ "$network" != netns ] || diagram=""
  for f in history.jsonl results.json index.html $diagram latency-raw.png rate.png; do
    [ -s "$dir/$f" ] || fail "$f is missing"
  done
  workload=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["workload"])' "$dir/results.json")
  # invalid: the workload checker found violations.
  valid=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("invalid" if r["checks"]["workload"] is False else "valid")' "$dir/results.json")
  mkdir -p "$dir/screenshots"

  if open_page "$dir" index.html 1300,1400; then
    need index.html "the verdict" 1 'id="verdict"'
    need index.html "the figures table" 1 'class="figures"'
    need index.html "links to the run's files" 5 '<li><a href='
    links index.html "$dir"
    if [ "$valid" = invalid ] && { [ "$workload" = lease ] || [ "$workload" = master ]; }; then
      py index-violation
    fi
  fi
  if [ "$workload" = lease ] && [ -s "$dir/lease-timeline.html" ]; then
    if open_page "$dir" lease-timeline.html 1400,1000; then
      timeline_frame lease-timeline.html
      if ! grep -q '>0 chunks,\| 0 chunks,' "$tmp/dom"; then
        need lease-timeline.html "chunk lanes" 1 'class="row lane( violating)?"'
        need lease-timeline.html "holding bars" 1 'class="h s[0-9]+( x)?"'
      fi
      if [ "$valid" = invalid ]; then
        need lease-timeline.html "lanes of the violations" 1 'class="row lane violating"'
        need lease-timeline.html "links to the violations' lanes" 1 'href="#lane-[0-9]+"'
        need lease-timeline.html "violation marks" 1 'class="v"'
        py list-violations lease-timeline.html
      fi
      links lease-timeline.html "$dir"
      probe "$dir" lease-timeline.html && py probe-lease "$valid"
    fi
  elif [ "$workload" = lease ]; then
    fail "lease-timeline.html is missing"
  fi
  if [ "$workload" = master ]; then
    if [ ! -s "$dir/master-timeline.html" ]; then
      fail "master-timeline.html is missing"
    elif open_page "$dir" master-timeline.html 1400,800; then
      timeline_frame master-timeline.html
      need master-timeline.html "a lane per node" 1 'class="row lane( violating)?" id="node-'
      if [ "$valid" = invalid ]; then
        need master-timeline.html "lanes of the violations' nodes" 2 'class="row lane violating"'
        need master-timeline.html "violation marks" 2 'class="v"'
        py list-violations master-timeline.html
      else
        need master-timeline.html "tenure bars" 1 'class="h s[0-9]+( x)?"'
      fi
      links master-timeline.html "$dir"
      probe "$dir" master-timeline.html && py probe-master "$valid"
    fi
  fi
  if [ -n "$diagram" ] && open_page "$dir" messages.svg 1400,1200; then
    need messages.svg "diagram panels" 1 'class="panel"'
    need messages.svg "columns" 2 'class="col"'
    need messages.svg "the legend of the arrows" 1 'class="legend"'
    need messages.svg "the legend's dropped and error arrows" 2 '>(dropped by a partition|error reply)</text>'
    py svg-labels "$workload"
    if [ "$workload" = lease ] && [ "$valid" = invalid ] && grep -q 'Around the first violation' "$tmp/dom"; then
      need messages.svg "the messages of the violation's ops, marked" 1 'class="msg hit"'
    fi
  fi
  local log
  log="$(dirname "$arg").log"
  if [ "$valid" = invalid ] && { [ "$workload" = lease ] || [ "$workload" = master ]; }; then
    if [ -s "$log" ]; then
      py console "$log"
    else
      echo "  console: not checked (no harness output kept at $log)"
    fi
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
