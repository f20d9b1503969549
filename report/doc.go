// Package report is everything a run's reader looks at: results.json
// (Results, written by WriteResults and read back by ReadStoredRun), the
// front page index.html (WriteIndex), the lease timeline
// lease-timeline.html (WriteLeaseTimelineFile, from what the lease
// analysis gathered), the message diagram messages.svg
// (WriteMessageDiagram, from the network's journal) and the pictures
// latency-raw.png and rate.png (PerfData, DrawPerf). It reads results,
// histories and the analyses' findings; it never runs, judges or
// measures anything: the harness runs the test and the workloads' checkers
// judge it, then the harness hands their findings here.
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
// # Pages and pictures
//
//   - index.html: the verdict, the key figures (ops, network, the lease
//     checker's totals and first violation, availability, failover,
//     analysis time and memory, seed, command) and a link to every file
//     of the run with a note; self-contained, links relative to the run.
//   - lease-timeline.html (timeline.go): a self-contained page (inline
//     markup, no script, no network, well-formed XML) with one lane per
//     chunk (every chunk with a violation, then the busiest; one summary
//     line for the rest), a bar per holding coloured by server, faults
//     shaded across every lane with the nodes they hit, violations in red
//     and listed at the top with links to their lanes; hovering shows
//     server, interval, op indices and token. It is drawn from a
//     lease.TimelineInput, which needs only the chunks that get a lane.
//   - messages.svg (msgdiagram.go): a Lamport diagram of client and node
//     messages, one column per node and client, an arrow per message
//     labelled with its body: around the first violation (only the
//     messages about its chunk) and the first seconds of the test. It
//     exists only where the network keeps a journal (the simulated one).
//   - latency-raw.png, rate.png (plot.go): latency of every op at its
//     invoke time and throughput per op, one colour per f and outcome
//     that is the same in every run, faults shaded, the legend beside the
//     plot; drawn from a bounded summary gathered pair by pair (PerfData:
//     completions per rate bucket, and the latency dots a reader can tell
//     apart, at most one per cell of a grid of about two by two pixels).
//
// DrawPictures draws what a workload's analysis gathered for pictures
// (workloads.Analyzed.Pictures): the lease timeline today; a new kind of
// picture adds a case there.
//
// # Tests
//
// index_test.go (the index names the verdict and links every file, each
// of which exists), timeline_test.go (lanes, marks, violations, faults,
// a page that stays small for any run, escaping, DrawPictures),
// msgdiagram_test.go (arrows, drops, panels around a violation, many
// clients sharing a column), plot_test.go (the pictures, stable colours,
// rate buckets, latency dots bounded however many ops).
package report
