package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"chunklease/client"
)

// memoryPart: what a `serve` member holds per chunk at a million chunks.
// A fresh 3-member cluster; every grant of N chunks (64 clients, one
// chunk server each, through the client) asks for a lease that ends at
// one common instant E, so that all N are live at once when the grants
// are done and all are idle right after E with no further request; then
// the periodic sweep reclaims them (between one and two sweep intervals,
// max(-max-lease-ms, 1 s), after their end). At four points (empty, all
// live, all idle, reclaimed) each member's heap and VmRSS are read, the
// heap as the live heap a garbage collection found (see settledHeap); bytes per
// chunk are the heap's growth over the empty member divided by N.
type memoryPart struct {
	chunks, clients int
	budget          time.Duration
}

func (m *memoryPart) flags(fs *flag.FlagSet) {
	fs.IntVar(&m.chunks, "chunks", 1_000_000, "chunks to grant")
	fs.IntVar(&m.clients, "clients", 64, "concurrent clients granting them")
	fs.DurationVar(&m.budget, "budget", 150*time.Second, "the time the grants may take; every lease ends this long after the first grant, and the cluster's longest lease is this plus 5 s (so reclaiming takes up to twice that after)")
}

// memPoint is one member's memory at one point.
type memPoint struct {
	Point     string  `json:"point"`
	Member    string  `json:"member"`
	HeapBytes float64 `json:"heap_bytes"` // go_gc_heap_live_bytes after a collection
	RSSBytes  float64 `json:"rss_bytes"`  // VmRSS
	Live      float64 `json:"live_leases"`
	Settled   bool    `json:"settled"` // a collection ran just before the heap was read
}

func (m *memoryPart) run(ctx context.Context, env *benchEnv) error {
	maxLeaseMs := (m.budget + 5*time.Second).Milliseconds()
	env.logf("starting 3 lease-node serve members (-max-lease-ms %d)", maxLeaseMs)
	oc, err := upOurs(env.repo, filepath.Join(env.work, "ours-memory"), env.memberEnv(), env.pids, "-max-lease-ms", fmt.Sprint(maxLeaseMs))
	if err != nil {
		return err
	}
	defer oc.down()
	var points []memPoint
	measure := func(name string) {
		for i := range oc.endpoints {
			p := settledHeap(ctx, oc, i)
			p.Point = name
			points = append(points, p)
			env.save("memory.jsonl", p)
			env.logf("%-9s n%d: heap %.1f MiB (settled %v), VmRSS %.1f MiB, live leases %.0f", name, i+1, p.HeapBytes/(1<<20), p.Settled, p.RSSBytes/(1<<20), p.Live)
		}
	}
	measure("empty")
	end, err := m.grantAll(ctx, env, oc)
	if err != nil {
		return err
	}
	measure("live")
	// Every lease ends at end on the members' clocks (within the drift
	// margin); wait a little more.
	time.Sleep(time.Until(end) + 2*time.Second)
	measure("idle")
	reclaim := 2*time.Duration(maxLeaseMs)*time.Millisecond + 5*time.Second
	env.logf("waiting %v for the sweeps to reclaim the idle chunks", reclaim)
	select {
	case <-time.After(reclaim):
	case <-ctx.Done():
		return ctx.Err()
	}
	measure("reclaimed")
	m.report(env, points)
	return nil
}

// grantAll grants m.chunks chunks; every lease ends at the returned time.
func (m *memoryPart) grantAll(ctx context.Context, env *benchEnv, oc *oursCluster) (time.Time, error) {
	c, err := client.New(client.Config{Endpoints: oc.endpoints, Seed: env.seed})
	if err != nil {
		return time.Time{}, err
	}
	defer c.Close()
	start := time.Now()
	end := start.Add(m.budget)
	var next, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for k := range m.clients {
		wg.Go(func() {
			server := fmt.Sprintf("cs%d", k)
			for i := next.Add(1) - 1; i < int64(m.chunks) && ctx.Err() == nil; i = next.Add(1) - 1 {
				leaseMs := time.Until(end).Milliseconds()
				if leaseMs < 1000 {
					firstErr.CompareAndSwap(nil, fmt.Sprintf("the grants took longer than -budget %v; raise it", m.budget))
					return
				}
				l, err := c.Grant(ctx, fmt.Sprintf("mem_%d", i), server, leaseMs)
				if err != nil || !l.Granted() {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("grant %d: %v (%+v)", i, err, l))
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	env.logf("granted %d chunks in %.1f s (%.0f a second), %d failed; every lease ends %.1f s after the first grant",
		m.chunks, took.Seconds(), float64(m.chunks)/took.Seconds(), failed.Load(), m.budget.Seconds())
	if e := firstErr.Load(); e != nil {
		return end, fmt.Errorf("%v", e)
	}
	return end, nil
}

// settledHeap reads member i's memory after a garbage collection: the
// heap in use is only known then (go_gc_heap_live_bytes, what the
// collection found reachable). An idle member collects
// only every 2 minutes, so this makes garbage for it to collect: GET
// /healthz (which changes nothing) from 8 loops until the collection
// count grows, at most 300 000 requests or 2 minutes; then the heap, the
// live leases and VmRSS are read at once.
func settledHeap(ctx context.Context, oc *oursCluster, i int) memPoint {
	p := memPoint{Member: fmt.Sprintf("n%d", i+1)}
	before, err := oc.metrics(ctx, i)
	if err != nil {
		return p
	}
	gcs := before["go_gc_duration_seconds_count"]
	hc := &http.Client{Timeout: 2 * time.Second}
	defer hc.CloseIdleConnections()
	var sent atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	deadline := time.Now().Add(2 * time.Minute)
	for range 8 {
		wg.Go(func() {
			for sent.Add(1) <= 300_000 && time.Now().Before(deadline) {
				select {
				case <-done:
					return
				default:
				}
				if resp, err := hc.Get(oc.endpoints[i] + "/healthz"); err == nil {
					resp.Body.Close()
				}
			}
		})
	}
	settled := waitUntil(2*time.Minute, func() bool {
		now, err := oc.metrics(ctx, i)
		return err == nil && now["go_gc_duration_seconds_count"] > gcs
	})
	close(done)
	wg.Wait()
	after, _ := oc.metrics(ctx, i)
	// The live heap the collection found: the heap allocated right after
	// it also holds what was allocated while it ran (these loops'
	// garbage), which measured up to half as much again at a million
	// chunks with one core a member. A member without the metric (an
	// older build) is read the old way.
	heap, ok := after["go_gc_heap_live_bytes"]
	if !ok {
		heap = after["go_memstats_heap_alloc_bytes"]
	}
	p.HeapBytes, p.Live, p.Settled = heap, after["chunklease_live_leases"], settled
	if ids, err := oc.pids(); err == nil {
		if rss, err := vmRSS(ids[p.Member]); err == nil {
			p.RSSBytes = float64(rss)
		}
	}
	return p
}

// report prints one row per member and point, with bytes per chunk.
func (m *memoryPart) report(env *benchEnv, points []memPoint) {
	empty := map[string]memPoint{}
	for _, p := range points {
		if p.Point == "empty" {
			empty[p.Member] = p
		}
	}
	w := env.out
	fmt.Fprintf(w, "\nmemory: %d chunks granted through the client to a 3-member cluster (n1 answered the grants: proposer and acceptor; n2, n3: acceptors); heap: the live heap the last collection found (load average now %.2f)\n\n", m.chunks, loadAverage())
	fmt.Fprintf(w, "| point | member | live leases | heap MiB | heap bytes / chunk | VmRSS MiB | VmRSS bytes / chunk |\n|---|---|---|---|---|---|---|\n")
	for _, p := range points {
		e := empty[p.Member]
		perHeap, perRSS := "-", "-"
		if p.Point != "empty" {
			perHeap = fmt.Sprintf("%.1f", (p.HeapBytes-e.HeapBytes)/float64(m.chunks))
			perRSS = fmt.Sprintf("%.1f", (p.RSSBytes-e.RSSBytes)/float64(m.chunks))
		}
		settled := ""
		if !p.Settled {
			settled = " (no collection seen: includes garbage)"
		}
		fmt.Fprintf(w, "| %s | %s | %.0f | %.1f%s | %s | %.1f | %s |\n", p.Point, p.Member, p.Live, p.HeapBytes/(1<<20), settled, perHeap, p.RSSBytes/(1<<20), perRSS)
	}
}
