package lease_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

var controlRates = flag.Bool("control-rates", false,
	"run every negative control (and every other weakening) over the whole budget and print how many schedules fail")

// control is a negative control: a configuration the checker must catch
// within the simulation's default seed budget.
type control struct {
	name string
	draw func(seed uint64) scenario
}

// weakened draws the default mix with one rule switched off.
func weakened(name string) control {
	return control{name, func(seed uint64) scenario { return drawScenario(seed, name) }}
}

// weakenedAmnesia draws only the amnesia profile, where the rules that
// order tokens are tested, with one rule switched off.
func weakenedAmnesia(name string) control { return weakenedIn(name, (*scenario).amnesia) }

// weakenedIn draws only one profile, the one where the rule is needed,
// with the rule switched off.
func weakenedIn(name string, profile func(*scenario, *rand.Rand)) control {
	return control{name, func(seed uint64) scenario { return drawProfile(seed, name, profile) }}
}

// weakenedMargined draws only the "clocks" profile with a drift margin and
// clients slower than rho by what it covers, with one rule switched off.
func weakenedMargined(name string) control {
	return control{name, func(seed uint64) scenario {
		rng := rand.New(rand.NewPCG(seed, 0x3a6))
		s := drawProfile(seed, name, (*scenario).clocks)
		s.margined(rng)
		return s
	}}
}

// controls run with the normal test suite. Each must produce at least one
// failing schedule, or the simulation (or the checker) has lost its teeth.
// -control-rates prints every control's catch rate over the whole budget;
// docs/testing.md lists the figures. Each is caught in about 1% of its
// schedules or more, so passing all 1000 has odds below one in 10^4: a
// real regression, not bad luck. Controls that need a fault the default
// mix draws seldom draw their profile alone: "amnesia" for the rules that
// order tokens through promises and recovery, "sequential" (restarts one
// at a time, clocks at the bound) for the restart floor, "load" (a
// coarse counter unit, whole-cluster restarts) for pacing, "bootedge"
// for the boot wait's stretch, "stretch" (clocks at 1+rho, proposes
// held back) for A2 judged on the stretched end (a2-unstretched, caught
// by the acceptors' protection property, simaccept_test.go, since no
// client can see it), "clocks" with a margin for the margin
// (of grants and renews, and of checks, whose clients believe them on
// their own clocks too), "twice" (quick restarts, held answers) for
// request ids; "amnesia" with every member on 2-4 cores for a recovery
// that counts a peer of several cores by one core's answer
// (sync-one-core; the property test of recovery across cores catches it
// with certainty too).
var controls = []control{
	{"acceptors=self", func(seed uint64) scenario {
		s := drawScenario(seed, "none")
		s.selfAcceptors()
		return s
	}},
	weakened("per-message-quorum"),
	weakened("release-by-server"),
	weakened("overwrite-live"),
	weakened("no-drift-stretch"),
	weakenedAmnesia("no-promise-check"),
	weakened("shrink-protection"),
	weakenedAmnesia("no-recovery"),
	weakenedAmnesia("fast-no-promise-check"),
	weakened("read-max-remaining"),
	weakenedIn("no-pacing", (*scenario).load),
	weakenedIn("boot-wait-no-stretch", (*scenario).bootEdge),
	weakened("fast-fail-definite"),
	weakened("no-lanes"),
	weakenedMargined("no-drift-margin"),
	weakenedMargined("check-no-margin"),
	weakenedIn("a2-unstretched", (*scenario).stretchEdge),
	{"restart-without-boot-wait", func(seed uint64) scenario {
		s := drawScenario(seed, "none")
		s.noBootWait = true
		if s.crash == 0 {
			s.crash, s.storm = time.Second, 0.5
		}
		return s
	}},
	{"holder-clock-outside-bound", func(seed uint64) scenario {
		s := drawProfile(seed, "none", (*scenario).clocks)
		s.marginMs, s.clientsInMargin = 0, false
		s.clientOutside = true
		return s
	}},
	{"sync-one-core", func(seed uint64) scenario {
		s := drawProfile(seed, "sync-one-core", (*scenario).amnesia)
		s.loops, s.minLoops = 4, 2
		return s
	}},
	{"wall-clocks-beyond-bound", func(seed uint64) scenario {
		s := drawProfile(seed, "none", (*scenario).load)
		s.aheadSkew, s.aheadFixed = 2*time.Duration(s.leaseMs)*time.Millisecond, true
		s.assertFencing = true
		return s
	}},
	// Membership (simmember_test.go): changes every few hundred
	// milliseconds among five nodes, and the maintenance window in which
	// two brand-new nodes replace two members (for the floor).
	weakenedIn("membership-no-wait", (*scenario).membershipProfile),
	weakenedIn("membership-two-at-once", (*scenario).membershipProfile),
	weakenedIn("membership-learner-votes", (*scenario).membershipProfile),
	weakenedIn("membership-no-floor", (*scenario).freshMembers),
	// Membership on members of 2-4 cores (doc.go "Membership and
	// cores"): a change's floor from the lead core's mark alone, in the
	// maintenance window.
	weakenedOnCores("membership-one-core-mark", (*scenario).freshMembers, 0),
}

// weakenedOnCores draws only one profile, with every member on 2-4
// cores, the rule switched off, and configurations reaching a member's
// other cores within spreadLeases leases (0: at once).
func weakenedOnCores(name string, profile func(*scenario, *rand.Rand), spreadLeases int64) control {
	return control{name, func(seed uint64) scenario {
		s := drawProfile(seed, name, profile)
		s.loops, s.minLoops = 4, 2
		s.spreadMax = time.Duration(s.leaseMs*spreadLeases) * time.Millisecond
		return s
	}}
}

// weakenedLagging draws the membership profile with the rule switched
// off, every member on 4 cores (the chunks ch_1, ch_2, ch_4 and ch_5 off
// the lead), configurations reaching a member's other cores within three
// leases, and a paced operator (simmember_test.go).
func weakenedLagging(name string) control {
	return control{name, func(seed uint64) scenario {
		s := drawProfile(seed, name, (*scenario).membershipProfile)
		s.loops, s.minLoops = 4, 4
		s.spreadMax = time.Duration(3*s.leaseMs) * time.Millisecond
		s.paced = true
		return s
	}}
}

// unasserted are the weakenings the simulation does not assert.
// late-timer and fast-late-timer: the contract's client model cannot see
// them. A client counts its lease from when it invoked the request, which
// precedes the prepare (or fast propose) and every accept. late-timer
// starts the deadline at the prepare quorum, fast-late-timer at the fast
// path's accept quorum; either way the proposer reports at most T at its
// reply, and invoke + T ends before any accepting acceptor's protection
// (accept + T, stretched). They would matter to a client that counted
// from the reply; the deadline rule (rule 1) is kept for such clients and
// for the master lease, whose holder is the proposer itself.
// no-wall-floor, recovery-floor-not-max and req-ids-from-zero: property
// tests catch them with certainty (propcontrols_test.go); the simulation
// sees them seldom (a ballot issued before a restart that reaches the
// restarted acceptor inside the same lease; a recovery whose answers
// differ and arrive largest first; stale read answers that mislead a
// check). -control-rates measures them all anyway.
var unasserted = []control{
	weakened("late-timer"),
	weakened("fast-late-timer"),
	weakenedIn("no-wall-floor", (*scenario).sequential),
	weakenedAmnesia("recovery-floor-not-max"),
	weakenedIn("req-ids-from-zero", (*scenario).twice),
	// membership-cores-no-confirm: a lead of several cores promising a
	// change before its other cores hold the configuration. It takes, in
	// one schedule: every member on the same number of cores with the
	// chunk off the lead, so that after a commit (which reaches the
	// leads only) every proposer and acceptor of the chunk still runs the
	// previous epoch E-1 until the shell's spread (held up for more than
	// stretch(M)) or a change prepare brings it E; an operator who asks
	// for the next change the moment next_change_in_ms allows it, so that
	// the change prepare pulls the lagging cores to E and, the leads'
	// own waits being over, chooses E+1 a round trip later; a lease of
	// E-1 accepted just before by a majority of E-1 that missed a member
	// (a lost propose, a partition, a crash); and a grant or check under
	// E+1, whose majority may share no member with it, before that lease
	// ends. weakenedLagging draws that world, and the checkers catch it
	// (a check that misses the holder, or two holders) in 4 of 1000
	// schedules from base seed 1 (first: seed 215) and none of 1000 from
	// base seed 5001: the chain needs a lost member in the old majority
	// and no renewal before the new grant, so it stays below the 1% a
	// control needs. TestLeadPromisesNoChangeUntilEveryCoreAdopted pins
	// the rule with certainty.
	weakenedLagging("membership-cores-no-confirm"),
}

// TestNegativeControls runs each control until its first failing schedule
// and fails if the whole default budget passes.
func TestNegativeControls(t *testing.T) {
	if raceEnabled {
		t.Skip("negative controls need the full seed budget; run without -race (scripts/run_tests.sh does)")
	}
	base := baseSeed(t)
	for _, c := range controls {
		t.Run(c.name, func(t *testing.T) { runControl(t, c, base, true) })
	}
	if *controlRates {
		for _, c := range unasserted {
			t.Run(c.name, func(t *testing.T) { runControl(t, c, base, false) })
		}
	}
}

// runControl plays the control's schedules from base: until the first
// failure, or with -control-rates the whole budget. If must, passing the
// whole budget fails the test.
func runControl(t *testing.T, c control, base uint64, must bool) {
	runControlWith(t, c, base, budget(), must)
}

// runControlBudget runs a control that must be caught within count
// schedules.
func runControlBudget(t *testing.T, c control, base uint64, count int) {
	runControlWith(t, c, base, count, true)
}

func runControlWith(t *testing.T, c control, base uint64, count int, must bool) {
	stopAfter := 1
	if *controlRates {
		stopAfter = 0
	}
	res := runMany(base, count, c.draw, stopAfter)
	failed, first := 0, 0
	for i, o := range res {
		if len(o.violations) == 0 {
			continue
		}
		if failed++; first == 0 {
			first = i + 1
			fmt.Printf("lease-sim control %s: caught at schedule %d (seed=%d): %s\n",
				c.name, first, o.sc.seed, o.violations[0].Text)
		}
	}
	if *controlRates {
		fmt.Printf("lease-sim control %s: %d of %d schedules failed (first: %d, 0 for none), base seed %d\n",
			c.name, failed, len(res), first, base)
	}
	if must && failed == 0 {
		t.Fatalf("control %s passed %d schedules from seed %d: the simulation no longer catches it",
			c.name, len(res), base)
	}
}
