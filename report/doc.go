// Package report is everything a run's reader looks at: results.json
// (Results, written by WriteResults and read back by ReadStoredRun), the
// front page index.html (WriteIndex), the lease timeline
// lease-timeline.html (WriteLeaseTimelineFile, from what the lease
// analysis gathered), the master timeline master-timeline.html
// (WriteMasterTimelineFile), the message diagram messages.svg
// (WriteMessageDiagram, from the network's journal), the pictures
// latency-raw.png and rate.png (PerfData, DrawPerf), and the words the
// console and the index share about a checker's findings (FindingsOf:
// the violations by kind, the first in full). It reads results,
// histories and the analyses' findings; it never runs, judges or
// measures anything: the harness runs the test and the workloads'
// checkers judge it, then the harness hands their findings here.
//
// # results.json (results.go)
//
// Results is the record of a run, keys in a fixed readable order: the
// verdict (valid, error, exit_code: ExitValid 0, ExitInvalid 1,
// ExitUnknown 2, ExitBadArgs 254, ExitFailed 255, as Maelstrom's), the
// workload checker's details under the workload's name, each checker's
// verdict, Jepsen's stats and Maelstrom's availability, the workload's
// statistics, the nemesis's counts, the final phase, the network's
// message counts, the pictures, the report files, the seed, command and
// flags, and the run's timing and peak memory. StoredRun is the part of
// a stored results.json that `maelstrom analyze` needs besides the
// history.
//
// Results.Nemesis counts the nemesis's completed steps by f (Ops, as the
// history holds them), the fault periods by kind that hit some node
// (Periods: what the pictures shade) and the steps that hit no node
// (EmptySteps: a partition whose grudge cuts nobody off, a kill or pause
// that found no node running).
//
// # Pages and pictures
//
//   - index.html: the verdict, the key figures (ops, network, the nemesis's
//     fault periods and the steps that hit no node, the violations by
//     kind and the first violation in full with links to the timeline
//     and the diagram, the lease or master checker's totals,
//     availability, failover or mastership, analysis time and memory,
//     seed, command) and a link to every file of the run with a note;
//     self-contained, links relative to the run.
//   - lease-timeline.html (timeline.go, on the frame of frame.go): a
//     self-contained page (inline markup, no script, no network,
//     well-formed XML) with one lane per chunk (every chunk with a
//     violation, then the busiest; one summary line for the rest), a bar
//     per holding coloured by server. Holdings that overlap in time are
//     drawn in sub-rows of their lane (subRows: a server's renewals stay
//     in its row, another server's overlapping lease goes below), so two
//     primaries show as two colours one above the other. A violation is a
//     red strip above the lane (violations that overlap merge into one
//     strip naming their count and the first), a faint red band behind
//     the bars, and a red outline on the holdings it names. Faults are
//     shaded across every lane and named in their own rows, each band
//     labelled with the longest text that fits its actual width (a
//     partition's target and shape, "majority: n0 n1 | n2 n3 n4", the
//     shape alone, then the nodes cut off; CSS container queries pick it)
//     and titled with everything. Violations are listed at the top with
//     links to their lanes; hovering shows server, interval, op indices,
//     the node that answered each op, and the token. It is drawn from a
//     lease.TimelineInput, which needs only the chunks that get a lane.
//   - master-timeline.html (mastertimeline.go, the same frame): one lane
//     per node with a bar per tenure (when that node believed it was
//     master: the union of [completion, invoke + remaining_ms) of its
//     is_master answers), each node's violations as strips on its lane,
//     faults shaded, the first violations listed with links to their
//     nodes' lanes; from a master.TimelineInput.
//   - Faults that hit no node (DrawnFaults) are neither drawn nor counted
//     as fault periods on the pages, in the pictures or in
//     results.json's Periods; the pages say how many there were.
//   - messages.svg (msgdiagram.go): a Lamport diagram of client and node
//     messages, one column per node and client, an arrow per message
//     labelled with its type and fields, the deciding ones first (server,
//     primary, token, the remaining times; the chunk last, and not at all
//     in a panel about one chunk), hover for the whole body; a legend of
//     the arrows (node, client, error, dropped, undelivered, the
//     violation's ops); around the first violation (only the messages
//     about its chunk, the request and reply of each op it names marked
//     "[op N]" and underlaid in red), the first seconds of the test, and
//     for each type of request those panels answer ok nowhere the first
//     such request answered ok (its chunk's messages), so a run that
//     began under faults still shows how each kind is served.
//     It exists only where the network keeps a journal (the simulated
//     one).
//   - latency-raw.png, rate.png (plot.go): latency of every op at its
//     invoke time and throughput per op (30 to 60 buckets of at least
//     1 s), one colour per f and outcome that is the same in every run,
//     faults shaded, the legend beside the plot; drawn from a bounded
//     summary gathered pair by pair (PerfData: completions per rate
//     bucket, and the latency dots a reader can tell apart, at most one
//     per cell of a grid of about two by two pixels).
//
// DrawPictures draws what a workload's analysis gathered for pictures
// (workloads.Analyzed.Pictures): the lease and the master timelines
// today; a new kind of picture adds a case there.
//
// # Tests
//
// index_test.go (the index names the verdict, the violation count and
// the first violation, the nemesis's periods, and links every file, each
// of which exists; a master run's index), timeline_test.go (lanes,
// marks, violations, overlapping holdings in sub-rows, violation
// stretches, faults that hit nobody left out, a page that stays small
// for any run, escaping, DrawPictures), frame_test.go (fault labels and
// their width rules, fault counts, plurals), mastertimeline_test.go
// (lanes per node, tenures, marks, links), findings_test.go (the
// console's lines), msgdiagram_test.go (arrows, drops, label order, the
// violation's ops marked, the legend, panels around a violation, many
// clients sharing a column), plot_test.go (the pictures, stable colours,
// rate buckets, latency dots bounded however many ops). The pages as a
// browser lays them out are checked by scripts/check_report.sh.
package report
