package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"chunklease/internal/fakelease"
)

// The client's own cost per call: a member that answers every request
// with a fixed body at once, so that what is measured is this package,
// net/http and loopback TCP. scripts/bench_net.sh measures the real
// service through this package.

// fixedReplies are the members' answers by path.
var fixedReplies = map[string]string{
	"/v1/lease_grant":   `{"type":"lease_grant_ok","chunk_handle":"ch_1","primary":"cs1","expires_in_ms":4998,"token":123}`,
	"/v1/lease_renew":   `{"type":"lease_renew_ok","new_expires_in_ms":4998,"token":124}`,
	"/v1/lease_check":   `{"type":"lease_check_ok","primary":"cs1","remaining_ms":4000,"expired":false}`,
	"/v1/lease_release": `{"type":"lease_release_ok","chunk_handle":"ch_1"}`,
}

func fixedMember(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		io.WriteString(w, fixedReplies[r.URL.Path])
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkClient runs each operation at 1, 16 and 64 concurrent callers
// through one Client against a fixed-answer member.
func BenchmarkClient(b *testing.B) {
	srv := fixedMember(b)
	c, err := New(Config{Endpoints: []string{srv.URL}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ops := map[string]func(context.Context) error{
		"grant":   func(ctx context.Context) error { _, err := c.Grant(ctx, "ch_1", "cs1", 5000); return err },
		"renew":   func(ctx context.Context) error { _, err := c.Renew(ctx, "ch_1", "cs1", 5000); return err },
		"check":   func(ctx context.Context) error { _, err := c.Check(ctx, "ch_1"); return err },
		"release": func(ctx context.Context) error { return c.Release(ctx, "ch_1", "cs1", 123) },
	}
	for _, name := range []string{"grant", "renew", "check", "release"} {
		for _, callers := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/callers=%d", name, callers), func(b *testing.B) {
				benchParallel(b, callers, ops[name])
			})
		}
	}
}

// BenchmarkFakeCluster is the same through the fake cluster's model, for
// comparison (its JSON and lock cost is the fake's, not the client's).
func BenchmarkFakeCluster(b *testing.B) {
	f := fakelease.Start(b, fakelease.Options{})
	c, err := New(Config{Endpoints: f.Endpoints()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for _, callers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("renew/callers=%d", callers), func(b *testing.B) {
			benchParallel(b, callers, func(ctx context.Context) error {
				_, err := c.Renew(ctx, "ch_1", "cs1", 5000)
				return err
			})
		})
	}
}

// benchParallel runs op from callers goroutines (a multiple of
// GOMAXPROCS, at least callers).
func benchParallel(b *testing.B, callers int, op func(context.Context) error) {
	b.ReportAllocs()
	b.SetParallelism(max(1, (callers+runtime.GOMAXPROCS(0)-1)/runtime.GOMAXPROCS(0)))
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := op(ctx); err != nil && !strings.Contains(err.Error(), "held") {
				b.Error(err)
				return
			}
		}
	})
}

// farMember answers every request, alone or a batch, after delay, as a
// member a network round trip away would: what the client adds to that
// is its own queueing.
func farMember(b *testing.B, delay time.Duration) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		time.Sleep(delay)
		w.Header()["Content-Type"] = []string{"application/json"}
		if r.URL.Path != "/v1/batch" {
			io.WriteString(w, fixedReplies[r.URL.Path])
			return
		}
		var calls []struct{ Op string }
		json.Unmarshal(body, &calls)
		out := `{"results":[`
		for i, c := range calls {
			if i > 0 {
				out += ","
			}
			out += `{"status":200,"body":` + fixedReplies["/v1/"+c.Op] + `}`
		}
		io.WriteString(w, out+"]}")
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkOpenLoopFarMember: renewals at a fixed rate with Poisson
// arrivals (holders renewing on a schedule) through one Client with
// Batching to a member 5 ms away, each latency counted from its
// arrival; p50 and p99 in ms. The member is never busy, so a latency
// above 5 ms is the client's own queueing.
func BenchmarkOpenLoopFarMember(b *testing.B) {
	const delay = 5 * time.Millisecond
	srv := farMember(b, delay)
	c, err := New(Config{Endpoints: []string{srv.URL}, Batching: true})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for _, rate := range []float64{200, 2000} {
		b.Run(fmt.Sprintf("rate=%.0f", rate), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			lat := make([]time.Duration, b.N)
			var wg sync.WaitGroup
			next := time.Now()
			for i := range b.N {
				time.Sleep(time.Until(next))
				at := next
				next = next.Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second)))
				wg.Go(func() {
					if _, err := c.Renew(context.Background(), "ch_1", "cs1", 5000); err != nil {
						b.Error(err)
					}
					lat[i] = time.Since(at)
				})
			}
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
		})
	}
}
