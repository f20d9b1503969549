package netsim

import (
	"cmp"
	"slices"
	"time"
)

// Journal bounds: the first JournalHead messages of a test and the latest
// JournalTail are kept (about 150 bytes each plus the body), whatever the
// run's length.
const (
	JournalHead = 20_000
	JournalTail = 50_000
)

// Entry is one journaled message: when it was sent, and when it was
// delivered or dropped by a partition (zero while still queued, or when
// its receiver closed first). Times are the harness's wall clock with its
// monotonic reading.
type Entry struct {
	Message
	SentAt  time.Time
	DoneAt  time.Time
	Dropped bool
}

// journal records what the message diagram (the harness's messages.svg)
// needs, as Maelstrom's net journal does, but in bounded memory: the
// first messages of the test in head, the latest in a ring. Message ids
// are dense and sent in order under the network's lock, so a message's
// slot follows from its id. Its cost is one slot write per event.
type journal struct {
	head []Entry // ids 0 .. len(head)-1
	tail []Entry // ring of ids >= headMax, slot (id - headMax) % tailMax

	headMax, tailMax int64 // zero: JournalHead and JournalTail (tests shrink them)
}

func (j *journal) bounds() (head, tail int64) {
	if j.headMax == 0 {
		return JournalHead, JournalTail
	}
	return j.headMax, j.tailMax
}

// note counts one event in the statistics and journals it. The network's
// lock is held.
func (n *Net) note(m Message, e event) {
	n.stats.count(m, e)
	n.journal.add(m, e, time.Now())
}

func (j *journal) add(m Message, e event, now time.Time) {
	if e == sent {
		j.send(Entry{Message: m, SentAt: now})
		return
	}
	if p := j.slot(m.ID); p != nil {
		p.DoneAt, p.Dropped = now, e == dropped
	}
}

// send stores a new message, overwriting the oldest of the ring when full.
func (j *journal) send(en Entry) {
	headMax, tailMax := j.bounds()
	if en.ID < headMax {
		if en.ID == int64(len(j.head)) {
			j.head = append(j.head, en)
		}
		return
	}
	i := int((en.ID - headMax) % tailMax)
	if i == len(j.tail) {
		j.tail = append(j.tail, en)
	} else if i < len(j.tail) {
		j.tail[i] = en
	}
}

// slot is the entry of message id, or nil when it is not kept.
func (j *journal) slot(id int64) *Entry {
	headMax, tailMax := j.bounds()
	if id < headMax {
		if id < int64(len(j.head)) {
			return &j.head[id]
		}
		return nil
	}
	i := int((id - headMax) % tailMax)
	if i < len(j.tail) && j.tail[i].ID == id {
		return &j.tail[i]
	}
	return nil
}

// Journal returns a copy of the journaled messages in id order. Messages
// between the first JournalHead and the latest JournalTail are missing
// from it: the caller sees a gap in the ids.
func (n *Net) Journal() []Entry {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.journal.entries()
}

func (j *journal) entries() []Entry {
	out := make([]Entry, 0, len(j.head)+len(j.tail))
	out = append(out, j.head...)
	tail := slices.Clone(j.tail)
	slices.SortFunc(tail, func(a, b Entry) int { return cmp.Compare(a.ID, b.ID) })
	return append(out, tail...)
}
