# cores_goal.awk: the figures and the goal line of scripts/bench_net.sh's
# cores part, from its runs.
#
#   awk -v rounds=N -v want="OP..." -v pairs=PAIRS -v goals=GOALS -f scripts/cores_goal.awk RUNS
#
# RUNS: each line a round number and a BenchmarkMemberCores line. In a
# round, each op ran at 1, 2, 2, 1 cores (or 2, 1, 1, 2): runs 1 and 2
# are a pair, and runs 3 and 4. A pair's ratio is its two-core run's
# ops/s over its one-core run's. A pair counts only when
#   - both runs got their cores (the "cpus" metric, CPU time over wall
#     time, at least 0.95 of GOMAXPROCS): a run that another process
#     shared measures the sharing, not the member; and
#   - its one-core run spent less than 1.3x the least CPU per op of the
#     op's one-core runs in the part. One loop on one core does the
#     same work at every run, so its CPU per op is the machine's speed:
#     this virtual machine has spells, tens of seconds long, in which a
#     lone busy CPU runs up to 1.7x slower while two busy ones slow down
#     less, which made such pairs' ratios 2.4-2.5x. The two-core run is
#     not filtered so: its spread may be the member's own.
# The goal is the median of the counted pairs' ratios, >= 1.7x, from 5
# pairs or more. N rounds should give 2N pairs of each op of want (space
# separated); a pair not found (a run missing, or without its ops/s) is
# counted as missing, and an op of want with no runs at all misses.
# PAIRS: each line a round number and a BenchmarkMemberCores line of
# one of the round's two GOMAXPROCS=1 processes that ran at once (the
# machine's own scaling, printed beside the goal).
# GOALS: the file the goal line is appended to (also printed).
function median(key,   n, i, j, t, v) {
  n = count[key]
  if (n == 0) return 0
  for (i = 1; i <= n; i++) v[i] = val[key, i]
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
  return n % 2 ? v[(n+1)/2] : (v[n/2] + v[n/2+1]) / 2
}
function add(key, x) { val[key, ++count[key]] = x }
# goal prints a goal line and appends it to the goals file.
function goal(line) { print line; print line >> goals }
# Each line: round, name, then value-unit pairs.
{
  r = $1; split($2, name, "/"); op = name[2]; sub(/^op=/, "", op); cpu = 1
  if (match(op, /-[0-9]+$/)) { cpu = substr(op, RSTART+1); op = substr(op, 1, RSTART-1) }
  ops[op] = 1
  n = ++runs[op, r]
  runCPU[op, r, n] = cpu
  for (i = 3; i < NF; i++) {
    if ($(i+1) == "ops/s") runOps[op, r, n] = $i
    if ($(i+1) == "cpus") runCPUs[op, r, n] = $i
    if ($(i+1) == "cpu-us/op") runUs[op, r, n] = $i
  }
  if (r > lastRound) lastRound = r
}
END {
  while ((getline l < pairs) > 0) {
    split(l, f, " "); split(f[2], name, "/"); op = name[2]; sub(/^op=/, "", op)
    for (i = 3; i < length(f); i++) if (f[i+1] == "ops/s") sum[op, f[1]] += f[i]
  }
  for (k in sum) { split(k, kk, SUBSEP); add(kk[1] SUBSEP "machine", sum[k]) }
  if (want == "") for (op in ops) want = want " " op
  nwant = split(want, wanted, " ")
  if (nwant == 0) {
    goal("MISS  member cores: no runs")
  }
  for (w = 1; w <= nwant; w++) {
    op = wanted[w]
    if (!(op in ops)) {
      goal(sprintf("MISS  member cores: %s: no runs", op))
      continue
    }
    kept = 0; shared = 0; slow = 0; list = ""
    # least: the least CPU per op of the op's one-core runs that got
    # their core.
    least = 0
    for (r = 1; r <= lastRound; r++)
      for (n = 1; n <= runs[op, r]; n++)
        if (runCPU[op, r, n] == 1 && runCPUs[op, r, n] >= 0.95 && runUs[op, r, n] > 0 && (least == 0 || runUs[op, r, n] < least)) least = runUs[op, r, n]
    for (r = 1; r <= lastRound; r++) {
      for (n = 1; n <= runs[op, r]; n++) {
        add(op SUBSEP runCPU[op, r, n], runOps[op, r, n])
        add(op SUBSEP "us" SUBSEP runCPU[op, r, n], runUs[op, r, n])
      }
      # Runs 1 and 2 are a pair, and runs 3 and 4.
      for (n = 1; n + 1 <= runs[op, r]; n += 2) {
        a = n; b = n + 1
        if (runCPU[op, r, a] == 2) { a = n + 1; b = n }
        if (runCPU[op, r, a] != 1 || runCPU[op, r, b] != 2 || runOps[op, r, a] <= 0 || runOps[op, r, b] <= 0) continue
        x = runOps[op, r, b] / runOps[op, r, a]
        if (runCPUs[op, r, a] < 0.95 * runCPU[op, r, a] || runCPUs[op, r, b] < 0.95 * runCPU[op, r, b]) { shared++; list = list " (" sprintf("%.2f", x) ")"; continue }
        if (runUs[op, r, a] >= 1.3 * least) { slow++; list = list " [" sprintf("%.2f", x) "]"; continue }
        kept++
        add(op SUBSEP "ratio", x)
        list = list " " sprintf("%.2f", x)
      }
    }
    missing = 2 * rounds - (kept + shared + slow)
    if (missing < 0) missing = 0
    one = median(op SUBSEP 1); two = median(op SUBSEP 2); ratio = median(op SUBSEP "ratio")
    machine = median(op SUBSEP "machine")
    printf "cores: %s  pairs (two-core run over the one-core run next to it; (x): a run did not get its cores; [x]: the one-core run was slow, 1.3x or more the least of %.3f us/op):%s\n", op, least, list
    printf "cores: %s  medians of all runs: GOMAXPROCS=1 %.0f ops/s at %.3f us/op, GOMAXPROCS=2 %.0f ops/s at %.3f us/op (%.2fx)\n", op, one, median(op SUBSEP "us" SUBSEP 1), two, median(op SUBSEP "us" SUBSEP 2), (one > 0 ? two / one : 0)
    if (machine > 0 && one > 0)
      printf "cores: %s  two GOMAXPROCS=1 processes at once %.0f ops/s: the machine gave %.2fx\n", op, machine, machine / one
    if (kept < 5)
      line = sprintf("MISS  member cores: %s 1 -> 2 cores: %d pairs counted, 5 needed (left out: %d without their cores, %d slow, %d missing)", op, kept, shared, slow, missing)
    else
      line = sprintf("%s  member cores: %s 1 -> 2 cores %.2fx (goal >= 1.7x; median of %d adjacent pairs; left out: %d without their cores, %d slow, %d missing; medians of all runs %.2fx; two 1-core processes at once: %.2fx)", (ratio >= 1.7 ? "PASS" : "MISS"), op, ratio, kept, shared, slow, missing, (one > 0 ? two / one : 0), (one > 0 ? machine / one : 0))
    goal(line)
  }
}
