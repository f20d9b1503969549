// Command fencecheck is the end-to-end test of holders and storage
// (contract section 3, "Holders and storage"), run by
// scripts/fence_check.sh on real processes on loopback:
//
//	fencecheck run -repo DIR -chunkserver BIN -work DIR [-duration 45s] [-negative-duration 12s] [-holders 5] [-lease-ms 1000] [-deadline 170s] [-seed S] [-negative-only]
//
// starts 3 `lease-node serve` members (scripts/cluster.sh), the example
// chunk server (examples/chunkserver, behind package fence) and the
// holders, each a process of this command (`fencecheck holder ...`)
// that competes for one chunk with client.Session and writes through the
// chunk server with Session.Act and the token, the documented pattern.
// Every holder reaches the members through proxies of its own (3
// loopback listeners this command runs, one per member), which is how it
// is cut off: a cut proxy holds every byte and every new connection
// until it heals, as a partition that drops and retransmits would.
//
// Faults, one at a time, in a cycle, each waiting until it has had its
// effect (bounded): a holder SIGSTOPped until another holder's newer
// token was accepted (and at least twice the lease); a holder paused
// between its check and its write (SIGUSR1 asks it to wait there for a
// line on stdin; it is SIGSTOPped meanwhile; a request lapses with the
// session it came in, and the next writer is asked) and continued only once a
// newer token was accepted, so that its write is certainly late; a
// member SIGSTOPped for 2.5 leases; a member killed (SIGKILL) and
// restarted with its boot wait; a holder cut off from every member for
// 2.5 leases. The main run must see every fault, every holder write, and
// a refusal for each write held between check and write.
//
// It checks, on one monotonic clock (CLOCK_MONOTONIC, which every
// process on the machine shares): no two holders' checked-valid
// intervals overlap (an act whose check before and check after both said
// the lease held, [From, To] widened by the clock conversion's
// uncertainty), and the chunk server never accepted a write whose token
// is below one it had accepted before (its log, in the order applied).
// Then the negative control: the same holders acting on Done alone, with
// the chunk server's check switched off (-unfenced), on another chunk of
// the same members, with the in-act pause; it must be caught (a stale
// write accepted, or an overlap). The last line is
//
//	fence: holders=H sessions=S writes=W refused=R stale-accepted=0 overlaps=0 negative-control=caught
//
// and the exit status 0; any violation, a fault that did not take effect,
// or a negative control not caught exits 1. Everything it starts it
// stops, by PID, also when interrupted (SIGINT, SIGTERM) or past its
// -deadline (170 s); the holders and the chunk server die with it even if
// it is killed outright (Pdeathsig), and scripts/fence_check.sh stops the
// members of a run killed so before it starts the next.
//
// check.go is the analysis (check_test.go: its rules on hand-made logs,
// with negative controls); holder.go the holder; proxy.go the cut; mono.go
// the clock; run.go and faults.go the orchestration.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fencecheck run ... | fencecheck holder ... (see the package documentation)")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = runCommand(os.Args[2:])
	case "holder":
		err = holderCommand(os.Args[2:])
	default:
		fmt.Fprintf(os.Stderr, "fencecheck: unknown command %q (run or holder)\n", os.Args[1])
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fencecheck:", err)
		os.Exit(1)
	}
}
