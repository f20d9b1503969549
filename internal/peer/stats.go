package peer

// LinkStats are one member's counters, for metrics.
type LinkStats struct {
	ID          string
	OutUp, InUp bool  // this node's connection to it, and its connection to this node
	Sent        int64 // frames queued for it
	Received    int64 // frames it sent that reached the loop's inbox
	Writes      int64 // writes to its connection (Sent/Writes: frames per write)
	// Dropped frames, by reason: its queue was full, no connection was
	// up, the frame was over the limit.
	DroppedFull, DroppedDown, DroppedBig int64
}

// Stats is the transport's counters at one instant.
type Stats struct {
	Links     []LinkStats // every other member, in member order
	Refused   int64       // incoming connections refused
	Malformed int64       // frames from members that did not decode
}

// Stats reads the counters; safe from any goroutine.
func (t *Transport) Stats() Stats {
	s := Stats{Refused: t.refused.Load(), Malformed: t.malformed.Load()}
	t.inMu.Lock()
	defer t.inMu.Unlock()
	for _, l := range t.members.Load().order {
		s.Links = append(s.Links, LinkStats{
			ID: l.id, OutUp: l.up.Load(), InUp: t.in[l.id] != nil,
			Sent: l.sent.Load(), Received: l.received.Load(), Writes: l.writes.Load(),
			DroppedFull: l.droppedFull.Load(), DroppedDown: l.droppedDown.Load(), DroppedBig: l.droppedBig.Load(),
		})
	}
	return s
}

func (t *Transport) linkReceived(id string) {
	if l := t.members.Load().links[id]; l != nil {
		l.received.Add(1)
	}
}
