package netsim

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestJournalKeepsHeadAndLatest: with room for 3 first and 4 latest
// messages, 10 messages leave ids 0-2 and 6-9, each with its outcome.
func TestJournalKeepsHeadAndLatest(t *testing.T) {
	j := journal{headMax: 3, tailMax: 4}
	t0 := time.Unix(0, 0)
	for id := range int64(10) {
		m := Message{ID: id, Src: "n1", Dest: "n2", Body: json.RawMessage(`{}`)}
		j.add(m, sent, t0.Add(time.Duration(id)))
		switch id % 3 {
		case 0:
			j.add(m, delivered, t0.Add(time.Duration(id+100)))
		case 1:
			j.add(m, dropped, t0.Add(time.Duration(id+100)))
		}
	}
	j.add(Message{ID: 4}, delivered, t0) // fell out of the ring: ignored
	var ids []int64
	for _, e := range j.entries() {
		ids = append(ids, e.ID)
		wantDone := e.ID%3 != 2
		if !e.DoneAt.IsZero() != wantDone || e.Dropped != (e.ID%3 == 1) || !e.SentAt.Equal(t0.Add(time.Duration(e.ID))) {
			t.Errorf("message %d: %+v", e.ID, e)
		}
	}
	if want := []int64{0, 1, 2, 6, 7, 8, 9}; !equalIDs(ids, want) {
		t.Errorf("kept %v, want %v", ids, want)
	}
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestNetJournalsSendsDeliveriesAndDrops: the network journals every
// accepted message with its delivery or drop.
func TestNetJournalsSendsDeliveriesAndDrops(t *testing.T) {
	n, err := New(Latency{Dist: Constant}, 1)
	if err != nil {
		t.Fatal(err)
	}
	n.Register("n1")
	n.Register("n2")
	if _, err := n.Send("n1", "n2", json.RawMessage(`{"type":"a"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Send("n1", "nX", json.RawMessage(`{}`)); err == nil {
		t.Fatal("send to an unknown node accepted")
	}
	if _, err := n.Recv(context.Background(), "n2"); err != nil {
		t.Fatal(err)
	}
	n.Drop("n1", "n2")
	if _, err := n.Send("n1", "n2", json.RawMessage(`{"type":"b"}`)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Recv still takes the queued message, drops it, then returns
	if _, err := n.Recv(ctx, "n2"); err == nil {
		t.Fatal("a dropped message was delivered")
	}
	got := n.Journal()
	if len(got) != 2 || got[0].Dropped || got[0].DoneAt.IsZero() || !got[1].Dropped || string(got[1].Body) != `{"type":"b"}` {
		t.Errorf("journal %+v", got)
	}
}
