package peer

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"chunklease/internal/testseed"
	"chunklease/lease"
)

// randomMsg is a message of a random type with random fields that
// lease.CheckMsg accepts.
func randomMsg(r *rand.Rand) lease.Msg {
	str := func() string {
		if r.IntN(4) == 0 {
			return ""
		}
		return strings.Repeat(string(rune('a'+r.IntN(26))), 1+r.IntN(40)) + "é"
	}
	m := lease.Msg{Type: msgTypes[r.IntN(len(msgTypes))], From: "n2", To: "n1", Chunk: str(),
		Ballot:  lease.Ballot{Counter: r.Uint64N(1 << 52), Incarnation: r.Int64N(1 << 53)},
		LeaseMs: 1 + r.Int64N(1<<40), Token: 1 + r.Int64N(1<<52), ReqID: r.Uint64N(1 << 53), Nonce: 1 + r.Uint64N(1<<53-1),
		Fast: r.IntN(2) == 0, OK: r.IntN(2) == 0, Recovering: r.IntN(2) == 0,
		Promised: lease.Ballot{Counter: r.Uint64N(1 << 52), Incarnation: r.Int64N(1 << 53)}, Counter: r.Uint64N(1 << 52)}
	m.Server = "cs" + str()
	if m.Type == lease.MsgSyncResp && r.IntN(2) == 0 {
		m.Cores = 2 + r.IntN(lease.MaxCores-1)
		m.Core = r.IntN(m.Cores)
	}
	if r.IntN(2) == 0 {
		m.Lease = &lease.Record{Server: str(), Token: r.Int64N(1 << 53), RemainingMs: r.Int64N(1 << 40), Expired: r.IntN(2) == 0}
	}
	m.Epoch, m.WaitMs, m.Learner, m.Active = r.Uint64N(1<<53), r.Int64N(1<<40), r.IntN(2) == 0, r.IntN(2) == 0
	if r.IntN(2) == 0 {
		m.Accepted = lease.Ballot{Counter: r.Uint64N(1 << 52), Incarnation: r.Int64N(1 << 53)}
	}
	if r.IntN(3) == 0 || m.Type == lease.MsgConfig {
		m.Conf = randomConf(r)
	}
	if r.IntN(3) == 0 || m.Type == lease.MsgChangePropose {
		m.Value = randomConf(r)
	}
	return m
}

// randomConf is a configuration lease.CheckMsg accepts.
func randomConf(r *rand.Rand) *lease.Membership {
	c := &lease.Membership{Epoch: r.Uint64N(1 << 53), Floor: r.Uint64N(1 << 52)}
	for i := range 1 + r.IntN(5) {
		c.Members = append(c.Members, fmt.Sprintf("n%d", i))
	}
	if r.IntN(2) == 0 {
		c.Prev = c.Members[: len(c.Members)-1 : len(c.Members)-1]
		c.Addrs = map[string]string{"n0": "127.0.0.1:7101"}
	}
	if len(c.Prev) == 0 {
		c.Prev = nil
	}
	return c
}

// TestFramesRoundTrip: every message decodes to itself from its frame,
// frames appended back to back split at their length prefixes, and the
// decoder keeps nothing of the buffer (strings are copies).
func TestFramesRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(testseed.Get(t), 1))
	var buf []byte
	var want []lease.Msg
	for range 2000 {
		m := randomMsg(r)
		want = append(want, m)
		buf = AppendFrame(buf, &m)
	}
	for i := 0; len(buf) > 0; i++ {
		n := int(binary.BigEndian.Uint32(buf))
		p := buf[frameHeaderLen : frameHeaderLen+n]
		got, err := DecodePayload(p, "n2", "n1")
		if err != nil {
			t.Fatalf("message %d %+v: %v", i, want[i], err)
		}
		clear(p) // the decoded strings must not share the buffer
		if !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("message %d decoded as\n%+v\nwant\n%+v", i, got, want[i])
		}
		buf = buf[frameHeaderLen+n:]
	}
}

// TestDecodeRefusesWhatTheCoreMustNotSee: damaged payloads and numbers no
// node sends are errors, never a half-read message.
func TestDecodeRefusesWhatTheCoreMustNotSee(t *testing.T) {
	ok := lease.Msg{Type: lease.MsgPropose, Chunk: "c", Server: "s", LeaseMs: 10, Ballot: lease.Ballot{Counter: 5, Incarnation: 1}}
	frame := func(m lease.Msg) []byte { return AppendFrame(nil, &m)[frameHeaderLen:] }
	if _, err := DecodePayload(frame(ok), "n2", "n1"); err != nil {
		t.Fatalf("a good propose: %v", err)
	}
	bigCounter, noServer, noLease, coreOnPropose := ok, ok, ok, ok
	bigCounter.Ballot.Counter = 1 << 52
	noServer.Server = ""
	noLease.LeaseMs = 0
	coreOnPropose.Core, coreOnPropose.Cores = 1, 2
	sync := lease.Msg{Type: lease.MsgSyncResp, ReqID: 1, Nonce: 1, Counter: 9}
	coreBeyond, tooManyCores := sync, sync
	coreBeyond.Core, coreBeyond.Cores = 2, 2
	tooManyCores.Core, tooManyCores.Cores = 0, lease.MaxCores+1
	good := frame(ok)
	for name, p := range map[string][]byte{
		"empty":              {},
		"type 0":             append([]byte{0}, good[1:]...),
		"type 99":            append([]byte{99}, good[1:]...),
		"unknown flag":       append([]byte{good[0], 0x80}, good[2:]...),
		"truncated":          good[:len(good)-1],
		"trailing byte":      append(append([]byte{}, good...), 0),
		"counter 2^52":       frame(bigCounter),
		"propose, no server": frame(noServer),
		"propose, lease 0":   frame(noLease),
		"propose, a core":    frame(coreOnPropose),
		"core 2 of 2":        frame(coreBeyond),
		"65 cores":           frame(tooManyCores),
	} {
		if m, err := DecodePayload(p, "n2", "n1"); err == nil {
			t.Errorf("%s: decoded as %+v", name, m)
		}
	}
}

// FuzzDecodePayload: no input makes the decoder panic, and whatever it
// accepts re-encodes to the same bytes.
func FuzzDecodePayload(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		m := randomMsg(r)
		f.Add(AppendFrame(nil, &m)[frameHeaderLen:])
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		m, err := DecodePayload(p, "a", "b")
		if err != nil {
			return
		}
		if again := AppendFrame(nil, &m)[frameHeaderLen:]; string(again) != string(p) {
			// Varints have one encoding each as written, but a decoder
			// accepts padded ones; only the message must survive.
			m2, err := DecodePayload(again, "a", "b")
			if err != nil || !reflect.DeepEqual(m, m2) {
				t.Fatalf("%x decoded as %+v, which re-encodes to %x (%v)", p, m, again, err)
			}
		}
	})
}

// BenchmarkFrames measures encoding and decoding one renewal's propose.
func BenchmarkFrames(b *testing.B) {
	m := lease.Msg{Type: lease.MsgPropose, From: "n1", To: "n2", Chunk: "chunk-000123", Server: "cs7", LeaseMs: 5000, Fast: true,
		Ballot: lease.Ballot{Counter: 229836327183233, Incarnation: 1795596305072209}}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendFrame(buf[:0], &m)
		if _, err := DecodePayload(buf[frameHeaderLen:], "n1", "n2"); err != nil {
			b.Fatal(err)
		}
	}
}
