package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"chunklease/internal/cpuprof"
)

// BenchmarkServeRenew measures renewals through the network: a 3-member
// serve cluster with peer TLS on loopback, clients spread over the
// members, each renewing its own chunk over a keep-alive HTTP connection.
// It reports the median latency and the throughput; run it with a fixed
// count, e.g.
//
//	go test -run '^$' -bench ServeRenew -benchtime 2000x .
//
// (figures, not assertions: the machine is shared). With
// MAELSTROM_CPUPROFILE_DIR=DIR each member writes a CPU profile of the
// whole run into DIR.
func BenchmarkServeRenew(b *testing.B) {
	c := startServeCluster(b, 3, "-max-lease-ms", "60000", "-lease-ms", "30000")
	for _, clients := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			benchRenew(b, c, clients)
		})
	}
	if os.Getenv(cpuprof.DirEnv) != "" {
		// The members write their CPU profiles when they exit: SIGTERM.
		for i := range c.members {
			c.signal(i, syscall.SIGTERM)
			c.waitExit(i, 10*time.Second)
		}
	}
}

func benchRenew(b *testing.B, c *serveCluster, clients int) {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	bodies := make([][]byte, clients)
	for k := range bodies {
		bodies[k] = []byte(fmt.Sprintf(`{"chunk_handle":"bench-%d-%d","server":"cs%d"}`, clients, k, k))
		if status := postBody(hc, c.url(k%3, "/v1/lease_grant"), bodies[k]); status != http.StatusOK {
			b.Fatalf("grant for client %d answered %d", k, status)
		}
	}
	lat := make([][]time.Duration, clients)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for k := range clients {
		n := b.N / clients
		if k < b.N%clients {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := c.url(k%3, "/v1/lease_renew")
			for range n {
				t0 := time.Now()
				if status := postBody(hc, url, bodies[k]); status != http.StatusOK {
					b.Errorf("renew answered %d", status)
					return
				}
				lat[k] = append(lat[k], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	}
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "ops/s")
}

// postBody posts body and drains the answer, keeping the connection warm.
func postBody(hc *http.Client, url string, body []byte) int {
	resp, err := hc.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
