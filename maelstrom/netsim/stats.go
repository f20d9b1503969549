package netsim

// Stats are the network's message counts, as Maelstrom's net checker
// reports them (maelstrom-spec C.5), plus the drops.
type Stats struct {
	All     Counts `json:"all"`     // every message
	Clients Counts `json:"clients"` // src or dest is a client
	Servers Counts `json:"servers"` // node to node
}

// Counts are the counts of one traffic group. Every accepted message is
// sent once and then either delivered, dropped (by a partition, or lost
// by a packet fault), or still queued (or lost to a closed endpoint)
// when the test ends; a packet fault's duplicate is one more delivery or
// drop of the same message.
type Counts struct {
	SendCount int64 `json:"send_count"` // accepted sends
	RecvCount int64 `json:"recv_count"` // deliveries
	DropCount int64 `json:"drop_count"` // dropped by a partition at dequeue, or lost by a packet fault
	// MsgCount is the number of distinct messages seen: every message is
	// sent exactly once, so it equals SendCount.
	MsgCount int64 `json:"msg_count"`
}

// event is what happened to a message.
type event int

const (
	sent event = iota
	delivered
	dropped
)

// count records one event in the overall group and in the message's own
// group.
func (s *Stats) count(m Message, e event) {
	group := &s.Servers
	if IsClient(m.Src) || IsClient(m.Dest) {
		group = &s.Clients
	}
	s.All.add(e)
	group.add(e)
}

func (c *Counts) add(e event) {
	switch e {
	case sent:
		c.SendCount++
		c.MsgCount++
	case delivered:
		c.RecvCount++
	case dropped:
		c.DropCount++
	}
}
