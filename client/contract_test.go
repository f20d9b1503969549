package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"chunklease/client"
	"chunklease/internal/fakelease"
)

// The contract tests use only what contract section 3 promises, so they
// run unchanged against real members: set CHUNKLEASE_TEST_ENDPOINTS to
// the client URLs of a running cluster (loopback only, e.g. the
// ENDPOINTS line of scripts/cluster.sh up), with LEASE_CLIENT_TOKEN and
// LEASE_CA_FILE when the cluster asks for them. Without it they run
// against a fake cluster on loopback. Chunk names are unique per run.

const endpointsEnv = "CHUNKLEASE_TEST_ENDPOINTS"

// underTest returns a Client over the members under test.
func underTest(t testing.TB) (*client.Client, []string) {
	t.Helper()
	cfg := client.Config{Token: os.Getenv("LEASE_CLIENT_TOKEN"), CAFile: os.Getenv("LEASE_CA_FILE")}
	if list := os.Getenv(endpointsEnv); list != "" {
		cfg.Endpoints = strings.Split(list, ",")
		for _, e := range cfg.Endpoints {
			if err := loopbackOnly(e); err != nil {
				t.Fatalf("%s: %v", endpointsEnv, err)
			}
		}
	} else {
		f := fakelease.Start(t, fakelease.Options{Token: cfg.Token})
		cfg.Endpoints, cfg.CAFile = f.Endpoints(), ""
	}
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, c.Endpoints()
}

// loopbackOnly refuses an endpoint outside 127.0.0.0/8 and ::1: tests
// send nothing elsewhere.
func loopbackOnly(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not a loopback address; the tests only talk to 127.0.0.0/8 and ::1", endpoint)
	}
	return nil
}

func uniqueChunk(t testing.TB) string {
	return fmt.Sprintf("ct_%s_%d", t.Name(), time.Now().UnixNano())
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestContractLeaseLifecycle: grant, the holder named to another server,
// renew refused to another server and granted twice to the holder with
// larger tokens, check, release by the grant's token (the newer instances
// stay) and by the latest (every instance ends, the first renewal's too:
// the chunk is free), a grant to another server with a larger token.
func TestContractLeaseLifecycle(t *testing.T) {
	c, _ := underTest(t)
	ch := uniqueChunk(t)
	g, err := c.Grant(ctx(t), ch, "cs1", 5000)
	if err != nil || !g.Granted() || g.Token <= 0 || g.ExpiresInMs <= 0 || g.ExpiresInMs > 5000 {
		t.Fatalf("grant: %+v, %v", g, err)
	}
	other, err := c.Grant(ctx(t), ch, "cs2", 5000)
	if err != nil || other.Granted() || other.Primary != "cs1" {
		t.Fatalf("grant to cs2 while cs1 holds: %+v, %v; want primary cs1", other, err)
	}
	if _, err := c.Renew(ctx(t), ch, "cs2", 5000); !errors.Is(err, client.ErrHeld) {
		t.Fatalf("renew by cs2: %v; want held (409)", err)
	}
	r0, err := c.Renew(ctx(t), ch, "cs1", 5000)
	if err != nil || r0.Token <= g.Token {
		t.Fatalf("renew by cs1: %+v, %v; want a token above %d", r0, err, g.Token)
	}
	r, err := c.Renew(ctx(t), ch, "cs1", 5000)
	if err != nil || r.Token <= r0.Token {
		t.Fatalf("second renew by cs1: %+v, %v; want a token above %d", r, err, r0.Token)
	}
	chk, err := c.Check(ctx(t), ch)
	if err != nil || chk.Primary != "cs1" || chk.Expired || chk.RemainingMs <= 0 {
		t.Fatalf("check: %+v, %v; want cs1 holding", chk, err)
	}
	if err := c.Release(ctx(t), ch, "cs1", g.Token); err != nil {
		t.Fatal(err)
	}
	if chk, err := c.Check(ctx(t), ch); err != nil || chk.Expired || chk.Primary != "cs1" {
		t.Fatalf("check after releasing the older token: %+v, %v; want the renewed instance still held", chk, err)
	}
	if err := c.Release(ctx(t), ch, "cs1", r.Token); err != nil {
		t.Fatal(err)
	}
	if chk, err := c.Check(ctx(t), ch); err != nil || !chk.Expired {
		t.Fatalf("check after releasing the latest token: %+v, %v; want free (the release ends every instance with a token <= it, the first renewal's too)", chk, err)
	}
	g2, err := c.Grant(ctx(t), ch, "cs2", 5000)
	if err != nil || !g2.Granted() || g2.Token <= r.Token {
		t.Fatalf("grant to cs2 after the release: %+v, %v; want granted with a token above %d", g2, err, r.Token)
	}
	c.Release(ctx(t), ch, "cs2", g2.Token)
}

// TestContractRenewThroughEveryMember: the holder renews through each
// member in turn; every token is larger than the one before.
func TestContractRenewThroughEveryMember(t *testing.T) {
	c, endpoints := underTest(t)
	ch := uniqueChunk(t)
	last := int64(0)
	for i, ep := range endpoints {
		one, err := client.New(client.Config{Endpoints: []string{ep}, Token: os.Getenv("LEASE_CLIENT_TOKEN"), CAFile: os.Getenv("LEASE_CA_FILE")})
		if err != nil {
			t.Fatal(err)
		}
		defer one.Close()
		var l client.Lease
		if i == 0 {
			l, err = one.Grant(ctx(t), ch, "cs1", 5000)
		} else {
			l, err = one.Renew(ctx(t), ch, "cs1", 5000)
		}
		if err != nil || l.Token <= last {
			t.Fatalf("through %s: %+v, %v; want a token above %d", ep, l, err, last)
		}
		last = l.Token
	}
	c.Release(ctx(t), ch, "cs1", last)
}

// TestContractBadRequest: lease_ms out of range is a 400 with the
// member's text, a definite refusal.
func TestContractBadRequest(t *testing.T) {
	c, _ := underTest(t)
	_, err := c.Grant(ctx(t), uniqueChunk(t), "cs1", -5)
	var e *client.Error
	if !errors.Is(err, client.ErrBadRequest) || !client.IsRefused(err) || !errors.As(err, &e) || e.Status != 400 || e.Code != 12 || e.Text == "" {
		t.Fatalf("got %v; want 400, code 12, with the member's text", err)
	}
}

// TestContractSubSecondSession: a 300 ms lease held by a Session through
// six renewals, then closed; the chunk is free after Close.
func TestContractSubSecondSession(t *testing.T) {
	c, _ := underTest(t)
	ch := uniqueChunk(t)
	renewed := make(chan client.Lease, 100)
	s, err := c.NewSession(ctx(t), ch, "cs1", client.SessionOptions{LeaseMs: 300, OnRenew: func(l client.Lease) { renewed <- l }})
	if err != nil {
		t.Fatal(err)
	}
	last := s.Token()
	for range 6 {
		select {
		case l := <-renewed:
			if l.Token <= last || !l.Granted() {
				t.Fatalf("renewal %+v after token %d", l, last)
			}
			last = l.Token
		case <-s.Done():
			t.Fatalf("lost: %v", s.Err())
		}
	}
	if err := s.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	// Free at once, unless a renewal whose outcome stayed unknown (an
	// attempt abandoned on a loaded machine) made an instance with a token
	// the Session never saw: that one runs out by itself within one lease.
	chk, err := c.Check(ctx(t), ch)
	if err == nil && !chk.Expired {
		t.Logf("check right after Close: %+v; waiting one lease for an instance of unknown outcome", chk)
		time.Sleep(time.Duration(min(chk.RemainingMs, 300))*time.Millisecond + 50*time.Millisecond)
		chk, err = c.Check(ctx(t), ch)
	}
	if err != nil || !chk.Expired {
		t.Fatalf("check after Close: %+v, %v; want free", chk, err)
	}
}

// TestContractMasterElection: a campaign on the first member wins; no
// other member says it is master meanwhile; Resign gives it back.
func TestContractMasterElection(t *testing.T) {
	c, endpoints := underTest(t)
	m, err := c.Campaign(ctx(t), endpoints[0], client.CampaignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range endpoints[1:] {
		st, err := c.MasterStatus(ctx(t), ep)
		if err != nil || st.IsMaster {
			t.Fatalf("status of %s while %s is master: %+v, %v", ep, endpoints[0], st, err)
		}
	}
	if err := m.Resign(ctx(t)); err != nil {
		t.Fatal(err)
	}
	st, err := c.MasterStatus(ctx(t), endpoints[0])
	if err != nil || st.IsMaster {
		t.Fatalf("status after Resign: %+v, %v; want not master", st, err)
	}
}

// BenchmarkEndpoints measures each operation through the Client at 1, 16
// and 64 concurrent callers against the members under test (the fake
// cluster, or CHUNKLEASE_TEST_ENDPOINTS), each caller on its own chunk.
func BenchmarkEndpoints(b *testing.B) {
	c, _ := underTest(b)
	base := uniqueChunk(b)
	for _, op := range []string{"grant", "renew", "check", "release"} {
		for _, callers := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/callers=%d", op, callers), func(b *testing.B) {
				b.ReportAllocs()
				b.SetParallelism(max(1, (callers+runtime.GOMAXPROCS(0)-1)/runtime.GOMAXPROCS(0)))
				var next atomic.Int64
				b.RunParallel(func(pb *testing.PB) {
					ch := fmt.Sprintf("%s_%d", base, next.Add(1))
					bg := context.Background()
					for pb.Next() {
						var err error
						switch op {
						case "grant":
							_, err = c.Grant(bg, ch, "cs1", 5000)
						case "renew":
							_, err = c.Renew(bg, ch, "cs1", 5000)
						case "check":
							_, err = c.Check(bg, ch)
						case "release":
							err = c.Release(bg, ch, "cs1", 1)
						}
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
