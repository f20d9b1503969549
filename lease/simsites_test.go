package lease_test

import (
	"slices"
	"time"
)

// The two-site deployment of the "sites" profile (simscenario_test.go):
// the acceptors form the main site, the other nodes a remote site with a
// slow uplink, and clients reach any live node through a load balancer.

// remoteSite lists, by node index, which nodes sit at the remote site:
// the non-acceptors of a two-site scenario. It is fixed for the schedule,
// so the world computes it once instead of on every message.
func remoteSite(sc scenario) []bool {
	remote := make([]bool, sc.nodes)
	for i := range remote {
		remote[i] = sc.uplink > 0 && !slices.Contains(sc.acceptors, i)
	}
	return remote
}

// uplinkDelay is the extra delay of a message sent by node i: the uplink
// delay, plus up to a tenth of it in jitter, from the remote site.
func (w *world) uplinkDelay(i int) time.Duration {
	if !w.remote[i] {
		return 0
	}
	return w.sc.uplink + time.Duration(w.rng.Int64N(int64(w.sc.uplink/10)+1))
}

// siteCut reports whether a message between the two nodes would cross the
// link between the sites while it is down.
func (w *world) siteCut(from, to int) bool {
	return w.linkDown && w.remote[from] != w.remote[to]
}

// route picks the node a worker's request goes to: Maelstrom's fixed
// worker-to-node binding, or with a load balancer a random live node (a
// down node fails its health check; with none live, any node).
func (w *world) route(worker int) int {
	if w.sc.script != nil {
		return w.scriptRoute(worker)
	}
	if !w.sc.balanced {
		return worker % w.sc.nodes
	}
	var live []int
	for i, n := range w.nodes {
		if n.core != nil {
			live = append(live, i)
		}
	}
	if len(live) == 0 {
		return w.rng.IntN(w.sc.nodes)
	}
	return live[w.rng.IntN(len(live))]
}

// siteOutage is a power loss at the main site: every acceptor crashes at
// once and the link between the sites drops with them, while the remote
// site stays up. The link comes back within a lease length after the last
// acceptor has restarted and sat out its boot wait, so the remote nodes'
// queued traffic reaches a site that serves again, with every promise
// forgotten.
func (w *world) siteOutage() {
	var last time.Duration
	for _, i := range w.sc.acceptors {
		last = max(last, w.crash(i))
	}
	w.linkDown = true
	w.recordNemesis("start-outage", "main-site", []any{"killed", w.names(w.sc.acceptors)})
	lease := time.Duration(w.sc.leaseMs) * time.Millisecond
	bootWait := lease + lease/10 // covers the drift stretch of the boot wait
	back := last + bootWait + time.Duration(w.rng.Int64N(int64(lease)))
	w.push(event{at: w.now + back, kind: evRestore})
}

// restoreLink brings the link between the sites back. What waited in its
// connections is delivered in the order it reached the link, as
// reconnecting TCP streams deliver it; whatever a partition still holds is
// held again on delivery.
func (w *world) restoreLink() {
	w.linkDown = false
	w.recordNemesis("stop-outage", nil, "link-restored")
	at := w.now + w.sc.latency.draw(w.rng)
	for k, e := range w.held {
		e.at = at + time.Duration(k)*time.Microsecond
		w.push(e)
	}
	w.held = w.held[:0]
	w.push(event{at: w.expDelay(w.sc.outage), kind: evOutage})
}
