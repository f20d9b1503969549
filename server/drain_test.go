package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestServeDrainUnderKeepAliveClients: 64 clients, each on its own
// keep-alive connection, grant their chunks through n1 back to back; n1
// gets SIGTERM while they do. Every request that reached n1 must be
// answered, 200 (in flight, or decided before) or 503 with Connection:
// close and Retry-After (draining), and none cut (a reset, or a
// connection closed before its answer). A client goes away at its first
// 503, as Retry-After asks; one that finds n1 no longer listening (its
// dial fails: nothing was sent) goes too. n1 exits 0. (The drain used to close idle
// keep-alive connections as clients sent on them: about 40 broken pipes
// a run.)
func TestServeDrainUnderKeepAliveClients(t *testing.T) {
	t.Parallel()
	const clients = 64
	c := startServeCluster(t, 3, "-max-lease-ms", "5000", "-lease-ms", "5000")
	var (
		answered atomic.Int64 // 200s, all clients
		refused  atomic.Int64 // clients that found n1 no longer listening
		mu       sync.Mutex
		cut      []string
		refusals []string // 503s without Connection: close or Retry-After
		wg       sync.WaitGroup
	)
	stop := make(chan struct{})
	var stopOnce sync.Once
	defer stopOnce.Do(func() { close(stop) })
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
			body := fmt.Sprintf(`{"chunk_handle":"drain-%d","server":"cs%d","lease_ms":1000}`, i, i)
			for k := 0; k < 100000; k++ {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := hc.Post(c.url(0, "/v1/lease_grant"), "application/json", strings.NewReader(body))
				var op *net.OpError
				if errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &op) && op.Op == "dial" {
					refused.Add(1) // n1 is gone: nothing was sent; another member's turn
					return
				}
				if err != nil {
					mu.Lock()
					cut = append(cut, fmt.Sprintf("client %d request %d: %v", i, k, err))
					mu.Unlock()
					return
				}
				_, rerr := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch {
				case rerr != nil:
					mu.Lock()
					cut = append(cut, fmt.Sprintf("client %d request %d: answer %d cut: %v", i, k, resp.StatusCode, rerr))
					mu.Unlock()
					return
				case resp.StatusCode == http.StatusOK:
					answered.Add(1)
				case resp.StatusCode == http.StatusServiceUnavailable:
					if !resp.Close || resp.Header.Get("Retry-After") == "" {
						mu.Lock()
						refusals = append(refusals, fmt.Sprintf("client %d: 503 with Connection: close %v, Retry-After %q", i, resp.Close, resp.Header.Get("Retry-After")))
						mu.Unlock()
					}
					return // Retry-After: go to another member
				default:
					mu.Lock()
					cut = append(cut, fmt.Sprintf("client %d request %d: status %d", i, k, resp.StatusCode))
					mu.Unlock()
					return
				}
			}
		}()
	}
	c.poll(20*time.Second, "the clients' first grants answered", func() bool { return answered.Load() >= 10*clients }, 0)
	before := answered.Load()
	c.signal(0, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		stopOnce.Do(func() { close(stop) })
		t.Fatal("the clients still ran 30 s after SIGTERM")
	}
	if code := c.waitExit(0, 15*time.Second); code != 0 {
		t.Fatalf("n1 exited %d after SIGTERM, want 0; its log:\n%s", code, c.log(0))
	}
	t.Logf("%d grants answered 200 before SIGTERM, %d in all; %d requests cut; %d clients found n1 gone", before, answered.Load(), len(cut), refused.Load())
	if len(cut) > 0 || len(refusals) > 0 {
		t.Fatalf("requests cut during the drain (%d):\n%s\n503s without their headers (%d):\n%s\nn1's log:\n%s",
			len(cut), strings.Join(cut, "\n"), len(refusals), strings.Join(refusals, "\n"), c.log(0))
	}
}
