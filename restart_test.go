package main

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"chunklease/lease"
)

// Restart tests of the real binary: a node process is killed (SIGKILL, as
// Maelstrom and Jepsen do) and started again with the same id, talking to
// scripted peers.

type wireBallot struct {
	Counter     uint64 `json:"counter"`
	Incarnation int64  `json:"incarnation"`
}

// nodeLine is the part of an output line these tests read.
type nodeLine struct {
	Dest string `json:"dest"`
	Body struct {
		Type   string     `json:"type"`
		MsgID  int        `json:"msg_id"`
		Ballot wireBallot `json:"ballot"`
		ReqID  *uint64    `json:"req_id"`
		Nonce  uint64     `json:"nonce"`
		OK     *bool      `json:"ok"`
		Prom   wireBallot `json:"promised"`
		// BootingMs is a booting answer's time left in the boot wait.
		BootingMs *int64 `json:"booting_ms"`
	} `json:"body"`
}

func (s *session) nextLine(where string) nodeLine {
	s.start()
	raw, ok := s.next(where)
	if !ok {
		s.t.Fatalf("%s: the node closed stdout\nstderr:\n%s", where, s.stderr.String())
	}
	var l nodeLine
	if err := json.Unmarshal([]byte(raw), &l); err != nil {
		s.t.Fatalf("%s: %v: %s", where, err, raw)
	}
	return l
}

// nextOf skips lines until one of type typ.
func (s *session) nextOf(where, typ string) nodeLine {
	for {
		if l := s.nextLine(where); l.Body.Type == typ {
			return l
		}
	}
}

const initLine = `{"src":"c0","dest":"n1","body":{"type":"init","msg_id":1,"node_id":"n1","node_ids":["n1","n2","n3"]}}`

// firstBallotAndReadID starts the node, asks for a grant and a check, and
// returns the ballot of its first prepare and the req_id and nonce of its
// first read.
func firstBallotAndReadID(s *session) (wireBallot, uint64, uint64) {
	s.write("init", initLine)
	s.nextOf("init", "init_ok")
	s.write("grant", `{"src":"c1","dest":"n1","body":{"type":"lease_grant","msg_id":2,"chunk_handle":"ch_1","server":"cs1"}}`)
	b := s.nextOf("grant", "prepare").Body.Ballot
	s.write("check", `{"src":"c1","dest":"n1","body":{"type":"lease_check","msg_id":3,"chunk_handle":"ch_1"}}`)
	read := s.nextOf("check", "read")
	if read.Body.ReqID == nil || read.Body.Nonce == 0 {
		s.t.Fatal("read without req_id or nonce")
	}
	return b, *read.Body.ReqID, read.Body.Nonce
}

// TestRestartNeverReusesBallotsOrRequestIDs kills a node and starts it
// again: its ballots carry a larger incarnation and a larger counter (the
// wall clock is the counter's floor), its request ids start above the
// previous incarnation's, and its reads carry another nonce, so no answer
// meant for the old process can be taken for an answer to the new one.
func TestRestartNeverReusesBallotsOrRequestIDs(t *testing.T) {
	first := &session{t: t, vars: map[string]json.RawMessage{}}
	defer first.kill()
	b1, r1, n1 := firstBallotAndReadID(first)
	first.kill()

	second := &session{t: t, vars: map[string]json.RawMessage{}}
	defer second.kill()
	b2, r2, n2 := firstBallotAndReadID(second)
	t.Logf("before the restart: ballot %+v, read id %d; after: ballot %+v, read id %d", b1, r1, b2, r2)
	switch {
	case b2.Incarnation <= b1.Incarnation:
		t.Fatalf("incarnation %d after the restart is not above %d", b2.Incarnation, b1.Incarnation)
	case b2.Counter <= b1.Counter:
		t.Fatalf("ballot counter %d after the restart is not above %d", b2.Counter, b1.Counter)
	case r2 <= r1:
		t.Fatalf("read id %d after the restart is not above %d", r2, r1)
	case n2 == n1:
		t.Fatalf("both incarnations sent nonce %d", n1)
	}
	for _, v := range []uint64{b1.Counter, b2.Counter, uint64(b2.Incarnation), r2, n1, n2} {
		if v >= 1<<53 {
			t.Fatalf("%d is beyond 2^53 on the wire", v)
		}
	}
}

// bootWaitProbe starts a node with args, answers its recovery syncs from
// n2 and n3 with high-water mark floor, then sends prepares from n2 with
// counter 1 and then above the floor until one is answered. It returns how
// long after init the first prepare was answered, and the answers.
func bootWaitProbe(t *testing.T, floor uint64, args ...string) (time.Duration, []nodeLine) {
	s := &session{t: t, vars: map[string]json.RawMessage{}, args: args}
	defer s.kill()
	started := time.Now()
	s.write("init", initLine)
	var answers []nodeLine
	deadline := started.Add(5 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		counter := uint64(1)
		if i%2 == 1 {
			// Above the recovered floor and above the restart's own floor
			// (its wall clock at the end of the boot wait): 10 s ahead.
			ahead := uint64(time.Now().Add(10*time.Second).UnixMilli()-lease.CounterEpochMs) * 10
			counter = max(floor, ahead<<lease.LaneBits) + 1<<7 + 1
		}
		s.write("probe", fmt.Sprintf(`{"src":"n2","dest":"n1","body":{"type":"prepare","msg_id":%d,"chunk_handle":"c%d","server":"cs1","ballot":{"counter":%d,"incarnation":5}}}`, 100+i, i, counter))
		for {
			l, ok := s.poll(25 * time.Millisecond)
			if !ok {
				break
			}
			switch l.Body.Type {
			case "sync":
				s.write("sync", fmt.Sprintf(`{"src":"%s","dest":"n1","body":{"type":"sync_ok","in_reply_to":%d,"req_id":%d,"nonce":%d,"counter":%d}}`,
					l.Dest, l.Body.MsgID, *l.Body.ReqID, l.Body.Nonce, floor))
			case "prepare_ok":
				answers = append(answers, l)
			}
		}
		if len(answers) >= 2 {
			return time.Since(started), answers
		}
	}
	t.Fatalf("no prepare answered within 5 s\nstderr:\n%s", s.stderr.String())
	return 0, nil
}

// poll returns the next output line if one comes within d: the probe's
// pace, not a synchronisation (the property is itself about time).
func (s *session) poll(d time.Duration) (nodeLine, bool) {
	select {
	case raw, ok := <-s.lines:
		if !ok {
			s.t.Fatalf("the node closed stdout\nstderr:\n%s", s.stderr.String())
		}
		var l nodeLine
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			s.t.Fatalf("%v: %s", err, raw)
		}
		return l, true
	case <-time.After(d):
		return nodeLine{}, false
	}
}

// TestBootWaitIsHonoured starts a node as a restarted one (-boot-wait-ms):
// its acceptor must answer no prepare for the boot wait, take the ballot
// high-water mark its peers report as a floor, and then refuse a ballot
// at or below it. (No load can make a correct node answer early: its
// boot wait starts after the probe's clock.) TestBootWaitAnswersBooting
// shows, with its negative control, what it answers meanwhile.
func TestBootWaitIsHonoured(t *testing.T) {
	const bootWait = 400 * time.Millisecond
	const floor = 1 << 40
	took, answers := bootWaitProbe(t, floor, "-boot-wait-ms", "400", "-drift-ppm", "1000")
	t.Logf("first prepare answered %v after init (boot wait %v)", took, bootWait)
	if took < bootWait {
		t.Fatalf("the node answered a prepare %v after init, inside its %v boot wait", took, bootWait)
	}
	var low, high *nodeLine
	for i := range answers {
		if answers[i].Body.Ballot.Counter == 1 {
			low = &answers[i]
		} else {
			high = &answers[i]
		}
	}
	if low == nil || high == nil {
		t.Fatalf("want answers to a low and a high ballot, got %+v", answers)
	}
	if *low.Body.OK || low.Body.Prom.Counter < floor {
		t.Fatalf("a ballot below the recovered floor %d was answered %+v", uint64(floor), low.Body)
	}
	if !*high.Body.OK {
		t.Fatalf("a ballot above the recovered floor was refused: %+v", high.Body)
	}
}

// TestBootWaitAnswersBooting: in its boot wait a node answers a prepare
// with "booting" and the time left, never with a vote. The negative
// control, the same probe against a node without the boot wait, gets a
// vote (prepare_ok) to the same first prepare, so the probe tells a node
// that ignores the setting apart. Both answers are the node's own words,
// not times: a loaded machine that delays the node changes neither (the
// boot wait, a minute, outlasts any delay the test would survive).
func TestBootWaitAnswersBooting(t *testing.T) {
	const bootWaitMs = 60_000
	got := firstPrepareAnswer(t, "-boot-wait-ms", "60000")
	if got.Body.Type != "booting" || got.Body.BootingMs == nil || *got.Body.BootingMs <= 0 || *got.Body.BootingMs > 2*bootWaitMs {
		t.Fatalf("in a %d ms boot wait the first prepare was answered %+v, want booting with the time left", bootWaitMs, got.Body)
	}
	control := firstPrepareAnswer(t, "-boot-wait-ms", "0")
	t.Logf("negative control: without a boot wait the first prepare was answered %s", control.Body.Type)
	if control.Body.Type != "prepare_ok" || control.Body.OK == nil || !*control.Body.OK {
		t.Fatalf("a node without a boot wait answered the first prepare %+v, want a vote (prepare_ok): the probe cannot tell the two apart", control.Body)
	}
}

// firstPrepareAnswer starts a node with args, sends init and one prepare
// from n2, and returns the node's answer to that prepare.
func firstPrepareAnswer(t *testing.T, args ...string) nodeLine {
	s := &session{t: t, vars: map[string]json.RawMessage{}, args: args}
	defer s.kill()
	s.write("init", initLine)
	s.write("probe", `{"src":"n2","dest":"n1","body":{"type":"prepare","msg_id":100,"chunk_handle":"c0","server":"cs1","ballot":{"counter":1,"incarnation":5}}}`)
	for {
		if l := s.nextLine("the answer to the first prepare"); l.Body.Type == "booting" || l.Body.Type == "prepare_ok" {
			return l
		}
	}
}
