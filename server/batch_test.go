package server

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"chunklease/client"
)

// TestServeBatch: POST /v1/batch answers each call as its own endpoint
// would (status and body, the Maelstrom node's texts for a bad field),
// refuses the request as a whole as any endpoint does (405, 400, 413),
// and carries the client package's batched calls: 48 holders renewing
// and checking at once through one member all succeed, in fewer HTTP
// requests than calls.
func TestServeBatch(t *testing.T) {
	t.Parallel()
	c := startServeCluster(t, 3, "-max-lease-ms", "10000", "-lease-ms", "10000")
	status, held := c.op(0, 0, "grant", lv("held", "cs1"))
	wantStatus(t, "grant of held", status, 200, held)

	badField := `{"chunk_handle":5,"server":"cs1"}`
	calls := `[{"op":"lease_grant","body":{"chunk_handle":"b1","server":"cs1"}},` +
		`{"op":"lease_grant","body":{"chunk_handle":"b2","server":"cs2","lease_ms":5000}},` +
		`{"op":"lease_grant","body":` + badField + `},` +
		`{"op":"master_start","body":{}},` +
		`{"op":"lease_steal"},` +
		`{"op":"lease_renew","body":{"chunk_handle":"held","server":"cs9"}},` +
		`{"op":"lease_check","body":{"chunk_handle":"held"}},` +
		`{"op":"lease_check","body":null},` +
		`{"op":"lease_grant","body":{"chunk_handle":"held","server":"cs9"}}]`
	status, reply, _, err := c.post(0, batchPath, []byte(calls))
	if err != nil || status != http.StatusOK {
		t.Fatalf("batch: %d %v %v", status, reply, err)
	}
	results, _ := reply["results"].([]any)
	want := []int{200, 200, 400, 404, 404, 409, 200, 400, 409}
	if len(results) != len(want) {
		t.Fatalf("batch answered %d results, want %d: %v", len(results), len(want), reply)
	}
	bodies := make([]map[string]any, len(results))
	for i, r := range results {
		m, _ := r.(map[string]any)
		bodies[i], _ = m["body"].(map[string]any)
		if st, _ := m["status"].(float64); int(st) != want[i] {
			t.Errorf("call %d: status %v, want %d (%v)", i, m["status"], want[i], m)
		}
	}
	if b := bodies[0]; b["type"] != "lease_grant_ok" || b["primary"] != "cs1" || tokenOf(t, b) <= tokenOf(t, held) {
		t.Errorf("grant of b1 in the batch: %v, want cs1 with a token above held's %v", b, held["token"])
	}
	if b := bodies[1]; b["primary"] != "cs2" || b["expires_in_ms"].(float64) > 5000 {
		t.Errorf("grant of b2 in the batch: %v, want cs2 for at most 5000 ms", b)
	}
	if b, want := bodies[2], maelstromErrorText(t, "lease_grant", badField); b["code"] != float64(12) || b["text"] != want {
		t.Errorf("bad field in the batch: %v, the Maelstrom node answers %q", b, want)
	}
	if b := bodies[5]; b["code"] != float64(22) {
		t.Errorf("renew by another server in the batch: %v, want code 22", b)
	}
	if b := bodies[6]; b["primary"] != "cs1" || b["expired"] != false {
		t.Errorf("check of held in the batch: %v, want cs1, live", b)
	}
	if b := bodies[8]; b["type"] != "lease_grant_ok" || b["primary"] != "cs1" {
		t.Errorf("grant of held to cs9 in the batch: %v, want 409 with the grant's reply naming cs1", b)
	}
	if _, single, _, _ := c.post(2, "/v1/lease_check", []byte("null")); bodies[7]["text"] != single["text"] || single["text"] == nil {
		t.Errorf("a null body in the batch: %v; POST /v1/lease_check answers %v", bodies[7], single)
	}

	resp, err := c.client.Get(c.url(1, batchPath))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET %s: %d (Allow %q), want 405 with Allow: POST", batchPath, resp.StatusCode, resp.Header.Get("Allow"))
	}
	many := "[" + strings.TrimSuffix(strings.Repeat(`{"op":"lease_check","body":{"chunk_handle":"x"}},`, maxBatchCalls+1), ",") + "]"
	for _, bad := range []string{`{}`, `[]`, `[{"op":`, many} {
		if status, reply, _, _ := c.post(1, batchPath, []byte(bad)); status != http.StatusBadRequest || reply["code"] != float64(12) {
			t.Errorf("batch %.40q: %d %v, want 400 code 12", bad, status, reply)
		}
	}
	big := append(append([]byte(`[{"op":"lease_check","body":{"chunk_handle":"`), bytes.Repeat([]byte("x"), 70<<10)...), `"}}]`...)
	if status, _, _, _ := c.post(1, batchPath, big); status != http.StatusRequestEntityTooLarge {
		t.Errorf("a 70 KiB batch: %d, want 413", status)
	}

	batchedHolders(t, c)
	c.hist.Judge()
}

// batchedHolders: 48 holders grant, then renew and check 5 times each, all
// at once through member 0 with Batching on; every call succeeds with its
// own chunk's answer, and member 0 saw batches.
func batchedHolders(t *testing.T, c *serveCluster) {
	t.Helper()
	cl, err := client.New(client.Config{Endpoints: []string{c.url(0, "")}, Batching: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 48)
	for k := range 48 {
		wg.Go(func() {
			chunk, server := fmt.Sprintf("batched_%d", k), fmt.Sprintf("cs%d", k)
			l, err := cl.Grant(ctx, chunk, server, 5000)
			if err != nil || !l.Granted() {
				errs <- fmt.Errorf("grant of %s: %+v %v", chunk, l, err)
				return
			}
			for range 5 {
				r, err := cl.Renew(ctx, chunk, server, 5000)
				if err != nil || r.Token <= l.Token {
					errs <- fmt.Errorf("renew of %s: %+v %v (grant's token %d)", chunk, r, err, l.Token)
					return
				}
				h, err := cl.Check(ctx, chunk)
				if err != nil || h.Primary != server || h.Expired {
					errs <- fmt.Errorf("check of %s: %+v %v, want %s live", chunk, h, err, server)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	_, m := c.get(0, "/metrics")
	counted := func(typ string) (n float64) {
		for _, line := range strings.Split(m, "\n") {
			if strings.HasPrefix(line, `chunklease_requests_total{outcome="ok",type="`+typ+`"}`) {
				fmt.Sscan(strings.Fields(line)[1], &n)
			}
		}
		return n
	}
	if renews, batches := counted("lease_renew"), counted("batch"); renews < 48*5 || batches < 2 || batches >= 48*11 {
		t.Errorf("member 0 counted %v ok renewals and %v batches, want the %d renewals and batches (2 or more, fewer than the calls)", renews, batches, 48*5)
	}
}
