package fence

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// chunkHandler stores the body under the path's chunk, as a chunk server
// would, and records the order of writes.
type chunkHandler struct {
	mu     sync.Mutex
	data   map[string]string
	tokens []string
}

func (h *chunkHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.data == nil {
		h.data = map[string]string{}
	}
	h.data[r.PathValue("chunk")] = string(body)
	h.tokens = append(h.tokens, r.Header.Get(Header))
	w.WriteHeader(http.StatusNoContent)
}

func fencedServer(t *testing.T) (*Fence, *chunkHandler, *httptest.Server) {
	f, h := New(), &chunkHandler{}
	mux := http.NewServeMux()
	mux.Handle("PUT /chunks/{chunk}", f.Middleware(func(r *http.Request) string { return r.PathValue("chunk") }, h))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, h, srv
}

func put(t *testing.T, url string, header map[string]string, body string) (int, refusal) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, url, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ref refusal
	if resp.StatusCode >= 400 {
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("a refusal's Content-Type is %q", ct)
		}
		if err := json.NewDecoder(resp.Body).Decode(&ref); err != nil {
			t.Fatalf("a refusal's body: %v", err)
		}
	}
	return resp.StatusCode, ref
}

// TestMiddlewareStatuses: a valid token reaches the handler (and is
// recorded), a lower one is 409 with both tokens, a missing or bad one
// 400 naming the header; refused requests never reach the handler.
func TestMiddlewareStatuses(t *testing.T) {
	f, h, srv := fencedServer(t)
	url := srv.URL + "/chunks/ch_1"
	if code, _ := put(t, url, map[string]string{Header: "20"}, "v1"); code != http.StatusNoContent || f.Highest("ch_1") != 20 {
		t.Fatalf("token 20: status %d, highest %d", code, f.Highest("ch_1"))
	}
	code, ref := put(t, url, map[string]string{Header: "19"}, "late")
	if code != http.StatusConflict || ref.Token != 19 || ref.Highest != 20 || ref.Resource != "ch_1" || !strings.Contains(ref.Error, "stop acting as primary") {
		t.Fatalf("token 19: %d %+v", code, ref)
	}
	for _, c := range []struct{ value, want string }{
		{"", "has no Fencing-Token header"}, {"abc", `Fencing-Token "abc" is not an integer`}, {"0", "0 is not a lease token"},
	} {
		hdr := map[string]string{}
		if c.value != "" {
			hdr[Header] = c.value
		}
		if code, ref := put(t, url, hdr, "bad"); code != http.StatusBadRequest || !strings.Contains(ref.Error, c.want) {
			t.Errorf("header %q: %d %+v, want 400 naming %q", c.value, code, ref, c.want)
		}
	}
	if h.data["ch_1"] != "v1" || len(h.tokens) != 1 {
		t.Fatalf("the handler saw %v, data %v; want only the first write", h.tokens, h.data)
	}
	req := httptest.NewRequest(http.MethodPut, "/", nil)
	SetToken(req.Header, 77)
	if tok, err := TokenFrom(req.Header); err != nil || tok != 77 {
		t.Fatalf("SetToken then TokenFrom: %d, %v", tok, err)
	}
}

// TestMiddlewareConcurrentWriters: writers racing over HTTP with tokens
// going up; the handler sees every resource's tokens in order.
func TestMiddlewareConcurrentWriters(t *testing.T) {
	_, h, srv := fencedServer(t)
	var wg sync.WaitGroup
	statuses := make(chan int, 400)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 50 {
				req, _ := http.NewRequest(http.MethodPut, srv.URL+"/chunks/ch_1", strings.NewReader("x"))
				SetToken(req.Header, int64(k*8+w+1))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				statuses <- resp.StatusCode
			}
		}()
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	last := int64(0)
	for _, v := range h.tokens {
		var tok int64
		fmt.Sscan(v, &tok)
		if tok < last {
			t.Fatalf("the handler saw token %d after %d", tok, last)
		}
		last = tok
	}
	if counts[http.StatusNoContent] != len(h.tokens) || counts[http.StatusNoContent]+counts[http.StatusConflict] != 400 {
		t.Fatalf("statuses %v, the handler saw %d writes", counts, len(h.tokens))
	}
	t.Logf("400 writes: %d accepted, %d refused", counts[http.StatusNoContent], counts[http.StatusConflict])
}

// TestRefused: the middleware's 409 reads back as the StaleError it
// stands for; another 409, and any other status, as nil.
func TestRefused(t *testing.T) {
	resp := func(status int, body string) *http.Response {
		return &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(body))}
	}
	err := Refused(resp(409, `{"error":"x","resource":"ch_1","token":4,"highest":9}`))
	var stale *StaleError
	if !errors.As(err, &stale) || *stale != (StaleError{Resource: "ch_1", Token: 4, Highest: 9}) {
		t.Fatalf("the fence's 409: %v", err)
	}
	for _, r := range []*http.Response{resp(409, "conflict"), resp(409, `{"error":"x"}`), resp(204, ""), resp(400, `{"error":"x","highest":9}`)} {
		if err := Refused(r); err != nil {
			t.Errorf("status %d: %v, want nil", r.StatusCode, err)
		}
	}
}
