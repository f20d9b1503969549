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
	// weakNoSticky turns sticky promises off (sticky.go): not a safety
	// rule, a switch for measuring what they buy.
	weakNoSticky
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
	weakNoSticky:        "no-sticky",
}

func (w weakening) String() string { return weakeningNames[w] }
