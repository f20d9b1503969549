package lease

import "time"

// DiagRec is temporary diagnostics.
func (n *Node) DiagRec(chunk string) (server string, ballot Ballot, liveUntil time.Duration) {
	a := n.chunks[chunk]
	return a.rec.server, a.rec.ballot, a.rec.liveUntil
}
