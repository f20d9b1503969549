package server

import (
	"math/rand/v2"
	"testing"

	"chunklease/internal/testseed"
	"chunklease/lease"
)

// TestAppendReplyAsJSON: the replies rendered field by field (grant,
// renew, check) are byte for byte what encoding/json renders, over
// random numbers and names, names that need escaping among them; and a
// body of another type still goes through encoding/json.
func TestAppendReplyAsJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Get(t), 0))
	names := []string{"", "cs1", "ch_0017", `quote"d`, `back\slash`, "<html>&", "tab\tnewline\n", "é", "\xff\xfe", "\u2028", "n1:7001"}
	name := func() string {
		if rng.IntN(4) == 0 {
			b := make([]byte, rng.IntN(12))
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			return string(b)
		}
		return names[rng.IntN(len(names))]
	}
	number := func() int64 {
		switch rng.IntN(4) {
		case 0:
			return 0
		case 1:
			return -rng.Int64()
		}
		return rng.Int64N(1 << 53)
	}
	for i := range 5000 {
		var body any
		switch i % 3 {
		case 0:
			body = lease.RenewOK{NewExpiresInMs: number(), Token: number()}
		case 1:
			body = lease.GrantOK{ChunkHandle: name(), Primary: name(), ExpiresInMs: number(), Token: number()}
		case 2:
			c := lease.CheckOK{RemainingMs: number(), Expired: rng.IntN(2) == 0}
			if rng.IntN(3) > 0 {
				p := name()
				c.Primary = &p
			}
			body = c
		}
		typ := name()
		got, err := appendReply([]byte("x"), typ, body)
		want, werr := appendReplyJSON([]byte("x"), typ, body)
		if err != nil || werr != nil || string(got) != string(want) {
			t.Fatalf("%T %+v, type %q:\n got %s (%v)\nwant %s (%v)", body, body, typ, got, err, want, werr)
		}
	}
	other := lease.ReleaseOK{ChunkHandle: "ch_1"}
	got, err := appendReply(nil, "lease_release_ok", other)
	if want, _ := appendReplyJSON(nil, "lease_release_ok", other); err != nil || string(got) != string(want) {
		t.Fatalf("release: got %s (%v), want %s", got, err, want)
	}
}

// BenchmarkAppendReply renders a renew's reply field by field and, for
// comparison, through encoding/json.
func BenchmarkAppendReply(b *testing.B) {
	body := lease.RenewOK{NewExpiresInMs: 9987, Token: 1_764_000_000_123_456}
	for _, path := range []struct {
		name   string
		render func([]byte, string, any) ([]byte, error)
	}{{"fields", appendReply}, {"json", appendReplyJSON}} {
		b.Run(path.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 128)
			for b.Loop() {
				buf, _ = path.render(buf[:0], "lease_renew_ok", body)
			}
		})
	}
}
