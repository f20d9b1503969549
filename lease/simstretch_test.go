package lease_test

import (
	"math/rand/v2"
	"time"
)

// stretchEdge aims proposes at the drift stretch of an acceptor's
// protection, where A2 alone keeps another server out (rule 4 judged on
// the stretched end of rule 5). An acceptor whose clock runs at 1+rho
// protects a lease of T for T/(1-rho) of real time, and would end it at
// T/(1+rho) without the stretch: the last T·2rho/(1-rho^2) of real time,
// 10-20% of T here. So: the "bootedge" cluster (three nodes on a fast
// LAN, a wide rate bound of 5-10%, two servers contending for one chunk
// with leases asked for at M) without its restarts and loss, every clock
// at 1+rho (only a fast clock opens the window), and delay spikes of up
// to an eighth of a lease on 5-20% of the messages. A
// propose held back that long reaches its acceptor after the others
// accepted it, so that acceptor's protection ends that much later than
// theirs; the competitor's prepare is open at the others once theirs
// end, and its propose then reaches the late acceptor inside the stretch
// of the lease it accepted. No client sees that acceptance
// (simaccept_test.go says why); the acceptors' protection property does.
func (s *scenario) stretchEdge(rng *rand.Rand) {
	s.bootEdge(rng)
	s.profile = "stretch"
	s.lossP, s.crash, s.minorityCrashes = 0, 0, false
	s.spikeP, s.spikeMax = 0.05+0.15*rng.Float64(), time.Duration(s.leaseMs/8)*time.Millisecond
	s.clockFast = true
}
