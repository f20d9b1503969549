package lease

// weakening switches off exactly one safety rule. It exists so the
// simulation can prove that each rule is needed: with the rule off, the
// checker must find a violation within the default seed budget. The type
// and the Config field are unexported and only export_test.go sets them,
// so no program outside this package's tests can switch a rule off.
type weakening uint8

const (
	// strong: every rule on.
	strong weakening = iota
	// weakLateTimer starts the attempt deadline at the prepare quorum
	// (the 2012 paper's step 3) instead of at the prepare send (rule 1).
	weakLateTimer
	// weakOverwrite lets an acceptor accept a proposal over another
	// server's live lease (drops rule 4's second half, the revision's A2).
	// Two later defences also keep a stale propose from overwriting a
	// live lease (the refusal to promise a prepare for another server
	// while a lease is live, and a restarted acceptor's recovered floor),
	// so the weakening drops them too: A2 is the last line.
	weakOverwrite
	// weakPerMessage counts quorums per response message, so a duplicated
	// response counts twice (drops rule 2).
	weakPerMessage
	// weakReleaseByServer makes release clear the server's latest lease
	// instance whatever its token (drops rule 6).
	weakReleaseByServer
	// weakNoStretch keeps acceptor leases live for T on the acceptor's
	// clock, without the drift factor (drops rule 5).
	weakNoStretch
	// weakNoPromiseCheck lets an acceptor accept a propose whose ballot is
	// below its promise (drops rule 4's first half).
	weakNoPromiseCheck
	// weakShrink lets a later, shorter instance of the same server replace
	// the protection of an earlier one (drops rule 10).
	weakShrink
	// weakNoRecovery lets a restarted acceptor serve after its boot wait
	// without recovering the ballot high-water mark (drops the token's
	// order across restarts, recovery.go).
	weakNoRecovery
	// weakFastNoPromise lets an acceptor accept a fast (prepare-less)
	// propose whatever its promise (drops the fast path's ballot
	// condition, which orders its tokens).
	weakFastNoPromise
	// weakFastLateTimer starts a fast attempt's deadline when the first
	// accept comes back instead of when propose is sent (drops rule 1 for
	// the fast path).
	weakFastLateTimer
	// weakReadMax reports a holder's remaining time as the largest any
	// acceptor reported instead of what a majority proves (protectedMs).
	weakReadMax
	// weakMasterStale answers master_status with is_master for a lease
	// length past the node's own deadline (drops rule 1 for the master).
	weakMasterStale
	// weakMasterOwnToken answers master_status with the node's own
	// count of the instances it held instead of the instance's token, as
	// a master that numbers its terms itself would (drops the master
	// token's order across nodes).
	weakMasterOwnToken
	// weakNoSticky turns sticky promises off (sticky.go): not a safety
	// rule, a switch for measuring what they buy.
	weakNoSticky
	// weakNoPacing lets the ballot counter run ahead of the wall clock
	// without bound (drops the lead bound L that the restart floor rests
	// on, ballot.go).
	weakNoPacing
	// weakUnitMs counts the counter's time part in milliseconds instead
	// of BallotUnit: pacing then throttles a node at 1000 ballots a second
	// (drops the rated 10 000).
	weakUnitMs
	// weakNoWallFloor starts a restarted acceptor without the floor of its
	// wall clock at the end of its boot wait (drops the restart floor;
	// only the recovery guard is left).
	weakNoWallFloor
	// weakBootNoStretch waits the boot wait on the node's own clock
	// without the drift stretch (drops rule 7's rate adjustment).
	weakBootNoStretch
	// weakNoMargin reports remaining times without subtracting
	// DriftMarginMs.
	weakNoMargin
	// weakRecoveryNotMax sets the floor to the latest recovery answer
	// instead of raising it to the largest.
	weakRecoveryNotMax
	// weakReqIDsFromZero starts request ids at 0 in every incarnation
	// instead of at the incarnation, and matches answers without the
	// nonce (drops "an answer meant for an earlier incarnation never
	// matches").
	weakReqIDsFromZero
	// weakFastDefinite forgets that a fast propose went out, so a renew
	// that fails after it answers error 11 (definite) instead of 0.
	weakFastDefinite
	// weakNoLanes issues counters without the node's lane, so two nodes
	// can issue the same counter (drops "one token never names two
	// servers" across nodes).
	weakNoLanes
	// weakReleaseExact ends only the instance whose token equals the
	// release's, as before rule 6 was widened: an older instance of the
	// same server stays protected after it gave the chunk back.
	weakReleaseExact
	// weakCheckNoMargin reports a check's remaining time without
	// subtracting DriftMarginMs (grants and renews keep the margin).
	weakCheckNoMargin
	// weakSyncOneCore counts an acceptor that runs several cores as
	// answered once any one of its cores answered a sync, instead of all
	// of them: its other cores' promises, on chunks that may be this
	// core's, are then not under the floor (cores.go).
	weakSyncOneCore
	// weakNoChangeWait lets an acceptor promise a membership change as
	// soon as it adopted its configuration (drops rule 11, the waiting
	// rule).
	weakNoChangeWait
	// weakTwoAtOnce lets one change replace a member by another (two
	// members at once) instead of refusing it.
	weakTwoAtOnce
	// weakNoConfigFloor adopts configurations without raising the ballot
	// floor to theirs (drops the order of tokens across changes).
	weakNoConfigFloor
	// weakLearnerVotes lets a node outside the configuration vote, and
	// proposers count its answers (drops "learners vote on nothing").
	weakLearnerVotes
	// weakChangeOneCore counts a member of several cores as promised in
	// the change instance on its lead's answer alone, whose high-water
	// mark covers only the lead's chunks (drops the whole member's mark
	// from the next configuration's floor).
	weakChangeOneCore
	// weakCoresNoConfirm lets the lead of several cores promise a change
	// once its own waiting rule is over, without the shell's word that
	// every other core adopted the configuration.
	weakCoresNoConfirm
	// weakA2Unstretched judges A2 on the lease's unstretched end: another
	// server's propose is accepted from T on the acceptor's clock instead
	// of T·(1+rho)/(1-rho) (drops rule 5 for A2 only; prepare is still
	// refused until the stretched end).
	weakA2Unstretched
)

var weakeningNames = map[weakening]string{
	strong:              "none",
	weakLateTimer:       "late-timer",
	weakOverwrite:       "overwrite-live",
	weakPerMessage:      "per-message-quorum",
	weakReleaseByServer: "release-by-server",
	weakNoStretch:       "no-drift-stretch",
	weakNoPromiseCheck:  "no-promise-check",
	weakShrink:          "shrink-protection",
	weakNoRecovery:      "no-recovery",
	weakFastNoPromise:   "fast-no-promise-check",
	weakFastLateTimer:   "fast-late-timer",
	weakReadMax:         "read-max-remaining",
	weakMasterStale:     "master-stale-status",
	weakMasterOwnToken:  "master-local-token",
	weakNoSticky:        "no-sticky",
	weakNoPacing:        "no-pacing",
	weakUnitMs:          "unit-ms",
	weakNoWallFloor:     "no-wall-floor",
	weakBootNoStretch:   "boot-wait-no-stretch",
	weakNoMargin:        "no-drift-margin",
	weakRecoveryNotMax:  "recovery-floor-not-max",
	weakReqIDsFromZero:  "req-ids-from-zero",
	weakFastDefinite:    "fast-fail-definite",
	weakNoLanes:         "no-lanes",
	weakReleaseExact:    "release-exact-token",
	weakCheckNoMargin:   "check-no-margin",
	weakSyncOneCore:     "sync-one-core",
	weakNoChangeWait:    "membership-no-wait",
	weakTwoAtOnce:       "membership-two-at-once",
	weakNoConfigFloor:   "membership-no-floor",
	weakLearnerVotes:    "membership-learner-votes",
	weakChangeOneCore:   "membership-one-core-mark",
	weakCoresNoConfirm:  "membership-cores-no-confirm",
	weakA2Unstretched:   "a2-unstretched",
}

func (w weakening) String() string { return weakeningNames[w] }
