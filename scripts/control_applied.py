#!/usr/bin/env python3
"""Whether a negative control's fault was applied in a run, so that its
checker had to catch it.

    scripts/control_applied.py KIND RUN_DIR

prints one line saying what happened and exits 0 when the fault was
applied (a run that stays valid is then a checker that missed it: the
suite fails), 1 when it was not (the run proves nothing either way: the
caller tries its next seed), 2 on bad arguments. Used by
scripts/harness_checks.sh and scripts/netns_checks.sh (expect_caught).

Each KIND states a condition, read from the history, under which the
violation is certain (kill-all-lease, master-amnesia, master-change) or all but certain
(fast-majority), whatever the machine's load:

kill-all-lease    --kill-without-boot-wait, lease workload: every node
                  killed in the main phase after some ok grant, and no
                  start until the final phase. The final phase starts the
                  nodes without the boot wait and reads every chunk: the
                  acceptors forgot every lease, so a read reports no holder
                  while a lease longer than the run still holds the chunk.
master-amnesia    --kill-without-boot-wait, master workload: a majority of
                  the nodes was killed and restarted while a node's
                  announced mastership ran (so no majority of acceptors
                  remembers it), and then another node answered is_master
                  true while it still ran. Who wins mastership after such
                  an amnesia is a race (the master itself, restarted, may
                  win it again, or a survivor may still report the old
                  master and be believed): a run in which no other node
                  won did not show the fault, and the caller tries its
                  next seed. With a lease longer than twice the run the
                  master never renews, so nothing restores the forgotten
                  mastership. This condition is the fault's effect, seen
                  in the history independently of the checker under test.
master-change     nodes that number their own masterships instead of
                  naming the token: a second node became master (its
                  first number, 1, is not above the tokens the first
                  master was told). Without a change of master the
                  numbers only grow, as tokens do.
fast-majority     the clock nemesis beyond the drift bound: for at least
                  four times the longest lease, a majority of the nodes
                  at once ran their clocks fast by more than half the
                  drawn bound (bumped, not strobing). Their acceptors end
                  every lease early while holders still believe it, under
                  the workload's steady grants and checks of every chunk:
                  runs with 5.4 to 6.7 s of it had 18 to 33 violations
                  each, on either network.
"""
import json
import os
import sys


def load(run):
    r = json.load(open(os.path.join(run, "results.json")))
    h = [json.loads(line) for line in open(os.path.join(run, "history.jsonl"))]
    return r, h


def pairs(h):
    """Client ops as (invoke, completion) pairs, by process."""
    open_, out = {}, []
    for op in h:
        if op["process"] == "nemesis":
            continue
        if op["type"] == "invoke":
            open_[op["process"]] = op
        elif op["process"] in open_:
            out.append((open_.pop(op["process"]), op))
    return out


def nemesis_steps(h):
    """Nemesis ops as (f, invoke time, completion time, completion value)."""
    ops = [op for op in h if op["process"] == "nemesis"]
    return [(a["f"], a["time"], b["time"], b.get("value")) for a, b in zip(ops[0::2], ops[1::2])]


def kill_all_lease(r, h):
    nodes = set(r["config"]["nodes"])
    limit = r["config"]["time_limit_s"] * 1e9
    steps = nemesis_steps(h)
    grants = [c["time"] for i, c in pairs(h) if c["type"] == "ok" and c["f"] == "grant"
              and c["value"].get("primary") == c["value"].get("server")]
    for k, (f, _, done, value) in enumerate(steps):
        if f != "kill" or set(value or []) != nodes or done >= limit:
            continue
        later = [s for s in steps[k + 1:] if s[0] == "start" and s[1] < limit]  # invoked in the main phase
        before = [g for g in grants if g < done]
        if not later and before:
            return True, "every node killed at %.1f s, %d ok grants before it, no start until the final phase" % (done / 1e9, len(before))
    return False, "no kill of every node after an ok grant and before the time limit, without a start after it"


def master_amnesia(r, h):
    nodes = r["config"]["nodes"]
    beliefs = [(c["node"], c["time"], i["time"] + c["value"]["remaining_ms"] * 1e6) for i, c in pairs(h)
               if c["f"] == "status" and c["type"] == "ok" and c["value"].get("is_master")]
    kills = [(done, set(value or [])) for f, _, done, value in nemesis_steps(h) if f == "kill"]
    amnesias = 0
    for master, since, until in beliefs:
        restarted, forgot = set(), None
        for at, killed in kills:
            if since < at < until:
                restarted |= killed
                if len(restarted) > len(nodes) // 2:
                    forgot = at
                    break
        if forgot is None:
            continue
        amnesias += 1
        other = [b for b in beliefs if b[0] != master and forgot < b[1] < until]
        if other:
            return True, "a majority restarted by %.1f s while %s's mastership ran (to %.1f s); %s then answered is_master at %.1f s" % (
                forgot / 1e9, master, until / 1e9, other[0][0], other[0][1] / 1e9)
    if amnesias:
        return False, "a majority of acceptors forgot a running mastership, but no other node became master while it ran"
    return False, "no running mastership was forgotten by a majority of the nodes"


def master_change(r, h):
    masters = []
    for i, c in pairs(h):
        if c["f"] == "status" and c["type"] == "ok" and c["value"].get("is_master") and c["node"] not in masters:
            masters.append(c["node"])
    if len(masters) > 1:
        return True, "%s was master, then %s" % (masters[0], masters[1])
    return False, "only %s was ever master" % (masters[0] if masters else "no node")


def fast_majority(r, h):
    nodes = r["config"]["nodes"]
    limit = r["config"]["time_limit_s"] * 1e9
    clock = r["nemesis"].get("clock") or {}
    threshold = 1 + clock.get("drift_ppm", 0) / 2e6
    need = 4 * r["config"]["lease_ms"] * 1e6
    rate = {n: 1.0 for n in nodes}
    strobing = {}  # node -> when its strobe ends
    events = []
    for f, invoked, done, value in nemesis_steps(h):
        events.append((invoked, f, value, done))
    best, start = 0, None
    t_prev = 0
    for invoked, f, value, done in events + [(limit, "end", None, limit)]:
        t = min(invoked, limit)
        fast = sum(1 for n in nodes if rate[n] >= threshold and strobing.get(n, 0) <= t_prev)
        if fast > len(nodes) // 2:
            start = t_prev if start is None else start
            best = max(best, t - start)
        else:
            start = None
        if f == "end" or invoked >= limit:
            break
        if f == "clock-reset":
            rate = {n: 1.0 for n in nodes}
            strobing = {}
        elif f == "clock-skew":
            for n, c in (value or {}).items():
                rate[n] = c["rate"]
                if "strobe" in c:
                    strobing[n] = done
                else:
                    strobing.pop(n, None)
        t_prev = t
    what = "a majority ran fast beyond rate %.3f for %.1f s at most (needed: four times the longest lease, %.1f s)" % (threshold, best / 1e9, need / 1e9)
    return best >= need, what


KINDS = {"kill-all-lease": kill_all_lease, "master-amnesia": master_amnesia, "master-change": master_change, "fast-majority": fast_majority}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in KINDS:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    applied, what = KINDS[sys.argv[1]](*load(sys.argv[2]))
    print(("applied: " if applied else "not applied: ") + what)
    sys.exit(0 if applied else 1)
