package server

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"chunklease/internal/certs"
	"chunklease/lease"
	leasewl "chunklease/workloads/lease"
)

// Tests of lease-node serve as users run it: real processes on loopback
// with generated certificates, driven over HTTP; every lease op is
// recorded and the history judged by the harness's lease checker.

func lv(chunk, server string, extra ...any) map[string]any {
	v := map[string]any{"chunk": chunk}
	if server != "" {
		v["server"] = server
	}
	for k := 0; k+1 < len(extra); k += 2 {
		v[extra[k].(string)] = extra[k+1]
	}
	return v
}

func wantStatus(t *testing.T, what string, got, want int, reply map[string]any) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: status %d, want %d; reply %v", what, got, want, reply)
	}
}

func tokenOf(t *testing.T, reply map[string]any) int64 {
	t.Helper()
	v, ok := reply["token"].(float64)
	if !ok || v <= 0 || v >= 1<<53 {
		t.Fatalf("reply %v has no integer token", reply)
	}
	return int64(v)
}

// TestServeLeasesThroughDifferentNodes: grants through different members,
// a renewal through another member, a check through a third, a release
// by token after which another server is granted at once; every reply in
// the contract's shape.
func TestServeLeasesThroughDifferentNodes(t *testing.T) {
	t.Parallel()
	c := startServeCluster(t, 3, "-max-lease-ms", "10000", "-lease-ms", "5000")
	status, g := c.op(0, 0, "grant", lv("a", "cs1", "lease_ms", 5000))
	wantStatus(t, "grant a via n1", status, 200, g)
	if g["type"] != "lease_grant_ok" || g["primary"] != "cs1" || g["chunk_handle"] != "a" || g["in_reply_to"] != nil || g["msg_id"] != nil {
		t.Fatalf("grant reply %v is not lease_grant_ok {chunk_handle, primary, expires_in_ms, token} without in_reply_to/msg_id", g)
	}
	t1 := tokenOf(t, g)
	status, g2 := c.op(1, 1, "grant", lv("b", "cs2"))
	wantStatus(t, "grant b via n2", status, 200, g2)
	status, other := c.op(1, 2, "grant", lv("a", "cs2"))
	if status != http.StatusConflict || other["type"] != "lease_grant_ok" || other["primary"] != "cs1" || tokenOf(t, other) != t1 {
		t.Fatalf("grant of a held chunk via n3 answered %d %v, want 409 with the grant's reply naming cs1 and its token %d", status, other, t1)
	}
	status, r := c.op(0, 1, "renew", lv("a", "cs1", "lease_ms", 5000))
	wantStatus(t, "renew a via n2", status, 200, r)
	if r["type"] != "lease_renew_ok" || tokenOf(t, r) <= t1 {
		t.Fatalf("renew reply %v: want lease_renew_ok with a token above %d", r, t1)
	}
	status, ck := c.op(2, 2, "check", lv("a", ""))
	if status != 200 || ck["type"] != "lease_check_ok" || ck["primary"] != "cs1" || ck["expired"] != false {
		t.Fatalf("check via n3 answered %d %v", status, ck)
	}
	status, rel := c.op(1, 2, "release", lv("b", "cs2", "token", tokenOf(t, g2)))
	if status != 200 || rel["type"] != "lease_release_ok" || rel["chunk_handle"] != "b" {
		t.Fatalf("release via n3 answered %d %v", status, rel)
	}
	status, g3 := c.op(0, 0, "grant", lv("b", "cs1"))
	if status != 200 || g3["primary"] != "cs1" || tokenOf(t, g3) <= tokenOf(t, g2) {
		t.Fatalf("grant of the released chunk to cs1 answered %d %v, want cs1 with a larger token", status, g3)
	}
	c.hist.Judge()
}

// TestServeRestartWithDefaultBootWait: n1 and n2, a majority, are killed
// while cs1 holds a lease and started again with the default boot wait
// (the longest lease): until it is over their /readyz says so, nobody
// else gets the chunk while cs1's lease runs (cs2 asks through every
// member all along), and the next holder's token is larger.
func TestServeRestartWithDefaultBootWait(t *testing.T) {
	t.Parallel()
	c, g := restartMajorityWhileHeld(t, 3000)
	c.waitReady(0, 10*time.Second)
	var got map[string]any
	c.poll(5*time.Second, "cs2 granted x after cs1's lease", func() bool {
		s, r := c.op(1, 0, "grant", lv("x", "cs2", "lease_ms", 1000))
		got = r
		return s == 200 && r["primary"] == "cs2"
	}, 0)
	if tokenOf(t, got) <= tokenOf(t, g) {
		t.Fatalf("cs2's token %d is not above cs1's %d", tokenOf(t, got), tokenOf(t, g))
	}
	c.hist.Judge()
}

// TestServeRestartWithoutBootWaitIsCaught is the negative control of the
// restart test: the same restart with -boot-wait-ms 0 lets the amnesiac
// majority grant cs2 while cs1's lease runs, and the lease checker must
// find the two primaries. cs1's lease is a minute long, so that however
// long a loaded machine takes to kill, start and connect the members,
// cs2's requests reach the amnesiac majority while it runs; they stop at
// the first grant to cs2.
func TestServeRestartWithoutBootWaitIsCaught(t *testing.T) {
	t.Parallel()
	c, _ := restartMajorityWhileHeld(t, 60_000, "-boot-wait-ms", "0")
	res := leasewl.CheckLease(c.hist.Ops())
	if res.Valid || len(res.Violations) == 0 || res.Violations[0].Kind != leasewl.TwoPrimaries {
		t.Fatalf("a restart without the boot wait was judged valid (%d violations): the restart test could not fail", len(res.Violations))
	}
}

// restartMajorityWhileHeld grants x to cs1 for leaseMs (also the
// members' longest lease, so the default boot wait), kills n1 and n2,
// starts them again with restartArgs (none: the default boot wait), and
// for the rest of cs1's lease asks for x for cs2 (for a third of leaseMs:
// a grant slowed by the members' reconnecting still leaves cs2 a lease to
// hold) through every member, until one grants it.
func restartMajorityWhileHeld(t *testing.T, leaseMs int, restartArgs ...string) (*serveCluster, map[string]any) {
	lease := strconv.Itoa(leaseMs)
	c := startServeCluster(t, 3, "-max-lease-ms", lease, "-lease-ms", lease)
	status, g := c.op(0, 2, "grant", lv("x", "cs1", "lease_ms", leaseMs))
	wantStatus(t, "grant", status, 200, g)
	leaseEnd := time.Now().Add(time.Duration(leaseMs) * time.Millisecond)
	c.kill(0)
	c.kill(1)
	c.start(0, restartArgs...)
	c.start(1, restartArgs...)
	c.poll(5*time.Second, "n1 answering /readyz", func() bool { s, _ := c.get(0, "/readyz"); return s != 0 }, 0)
	if len(restartArgs) == 0 {
		status, body := c.get(0, "/readyz")
		if status != http.StatusServiceUnavailable || !strings.Contains(body, "boot wait") {
			t.Fatalf("/readyz in the boot wait answered %d %s, want 503 naming the boot wait", status, body)
		}
		if !strings.Contains(c.log(0), "boot wait "+lease+" ms (the default") {
			t.Fatalf("the restarted node's log does not state its default boot wait:\n%s", c.log(0))
		}
	}
	for k := 0; time.Until(leaseEnd) > 200*time.Millisecond; k++ {
		if s, r := c.op(1, k%3, "grant", lv("x", "cs2", "lease_ms", leaseMs/3)); s == 200 && r["primary"] == "cs2" {
			break
		}
	}
	return c, g
}

// TestServeDrainsOnSIGTERM: with the peers stopped, a renewal through n1
// goes out as a propose and waits for a majority; SIGTERM then makes n1
// refuse new requests at once, also one it could answer alone, and report
// not ready, answer the renewal (504: proposes went out, no majority
// answered), and exit 0.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	c := startServeCluster(t, 3, "-max-lease-ms", "10000", "-lease-ms", "10000", "-quorum-timeout-ms", "2000")
	status, g := c.op(0, 0, "grant", lv("d", "cs1"))
	wantStatus(t, "grant", status, 200, g)
	c.pause(1)
	c.pause(2)
	type answer struct {
		status int
		reply  map[string]any
	}
	inFlight := make(chan answer, 1)
	go func() {
		s, r := c.op(0, 0, "renew", lv("d", "cs1"))
		inFlight <- answer{s, r}
	}()
	c.poll(5*time.Second, "the renewal in flight", func() bool {
		_, m := c.get(0, "/metrics")
		return strings.Contains(m, "chunklease_requests_in_flight 1")
	}, 0)
	c.signal(0, syscall.SIGTERM)
	c.poll(5*time.Second, "n1 not ready while draining", func() bool {
		s, body := c.get(0, "/readyz")
		return s == http.StatusServiceUnavailable && strings.Contains(body, "shutting down")
	}, 0)
	// master_status is answered from the node's own state, so it would
	// succeed: only the drain refuses it.
	status, refused, resp, err := c.post(0, "/v1/master_status", []byte(`{}`))
	if err != nil || status != http.StatusServiceUnavailable || refused["code"] != float64(11) || resp.Header.Get("Retry-After") == "" ||
		!resp.Close || !strings.Contains(fmt.Sprint(refused["text"]), "shutting down") {
		t.Fatalf("a new request while draining: %d %v %v, want 503 code 11 saying the node is shutting down, with Retry-After and Connection: close",
			status, refused, err)
	}
	a := <-inFlight
	if a.status != http.StatusGatewayTimeout || a.reply["code"] != float64(0) {
		t.Fatalf("the renewal in flight was answered %d %v, want 504 code 0 (proposes went out, no majority)", a.status, a.reply)
	}
	if code := c.waitExit(0, 10*time.Second); code != 0 {
		t.Fatalf("n1 exited %d after SIGTERM, want 0; its log:\n%s", code, c.log(0))
	}
	c.resume(1)
	c.resume(2)
	c.hist.Judge()
}

// TestServeRefusesPeersThatAreNotMembers: a certificate the cluster CA
// signed for a name outside the cluster, and one another CA signed for a
// member's name, are both refused on the peer port, and each refusal is
// logged with the remote address and the name presented.
func TestServeRefusesPeersThatAreNotMembers(t *testing.T) {
	t.Parallel()
	c := startServeCluster(t, 3)
	ca, err := certs.LoadCA(c.dir)
	if err != nil {
		t.Fatal(err)
	}
	other, err := certs.NewCA("another CA", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	for _, tc := range []struct {
		issuer  *certs.CA
		name    string
		logWant string
	}{
		{ca, "n9", "names no member of the cluster"},
		{other, "n2", "is not one the cluster CA issued"},
	} {
		crtPEM, keyPEM, err := tc.issuer.Issue([]string{tc.name}, nil, time.Now(), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		pair, err := tls.X509KeyPair(crtPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := tls.Dial("tcp", c.members[0].peerAddr, &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, ServerName: "n1"})
		if err == nil {
			// TLS 1.3: the server's verdict on our certificate arrives with the first read.
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err = conn.Read(make([]byte, 1))
			conn.Close()
		}
		if err == nil {
			t.Fatalf("a peer connection with a certificate for %s from %s was not refused", tc.name, tc.issuer.Cert.Subject.CommonName)
		}
		c.poll(5*time.Second, "the refusal of "+tc.name+" in n1's log", func() bool {
			for _, line := range strings.Split(c.log(0), "\n") {
				if strings.Contains(line, "refused a peer connection from 127.0.0.1:") && strings.Contains(line, "DNS ["+tc.name+"]") && strings.Contains(line, tc.logWant) {
					return true
				}
			}
			return false
		}, 0)
	}
	_, m := c.get(0, "/metrics")
	if !strings.Contains(m, "chunklease_peer_connections_refused_total 2") {
		t.Fatalf("the metrics do not count the 2 refusals:\n%s", grepLines(m, "refused"))
	}
	c.waitReady(0, 5*time.Second) // the members still talk
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestServeBearerToken: with a client token set, a request without it or
// with a wrong one is refused with 401, the right one is served; the
// probes stay open, the metrics do not.
func TestServeBearerToken(t *testing.T) {
	t.Parallel()
	c := newServeCluster(t, 1)
	tokenFile := filepath.Join(c.dir, "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.start(0, "-boot-wait-ms", "0", "-client-token-file", tokenFile)
	c.waitReady(0, 10*time.Second)
	body := []byte(`{"chunk_handle":"t","server":"cs1"}`)
	for _, h := range [][]string{nil, {"Authorization", "Bearer wrong"}, {"Authorization", "s3cret-token"}} {
		status, reply, resp, err := c.post(0, "/v1/lease_grant", body, h...)
		if err != nil || status != http.StatusUnauthorized || reply["type"] != "error" || resp.Header.Get("WWW-Authenticate") == "" {
			t.Fatalf("grant with header %v: %d %v %v, want 401 with WWW-Authenticate", h, status, reply, err)
		}
	}
	for _, h := range []string{"Bearer s3cret-token", "bearer s3cret-token"} {
		status, reply, _, _ := c.post(0, "/v1/lease_grant", body, "Authorization", h)
		wantStatus(t, "grant with "+h, status, 200, reply)
	}
	if status, _, _, _ := c.post(0, batchPath, []byte(`[{"op":"lease_check","body":{"chunk_handle":"t"}}]`)); status != http.StatusUnauthorized {
		t.Fatalf("a batch without the token answered %d, want 401", status)
	}
	if s, _ := c.get(0, "/metrics"); s != http.StatusUnauthorized {
		t.Fatalf("/metrics without the token answered %d, want 401", s)
	}
	if s, _ := c.get(0, "/healthz"); s != http.StatusOK {
		t.Fatalf("/healthz without the token answered %d, want 200", s)
	}
}

// TestServeStatusCodes reaches every status of the contract's mapping but
// 401 (TestServeBearerToken): 200, 400 (bad JSON, a bad field: the
// Maelstrom node's own texts), 404, 405, 409, 413, 503 with Retry-After
// (no majority, nothing proposed), 504 (a propose went out, no majority).
func TestServeStatusCodes(t *testing.T) {
	t.Parallel()
	c := startServeCluster(t, 3, "-max-lease-ms", "10000", "-lease-ms", "10000", "-quorum-timeout-ms", "800")
	seen := map[int]bool{}
	check := func(what string, status, want int, reply map[string]any, code float64) {
		t.Helper()
		wantStatus(t, what, status, want, reply)
		if want != 200 && (reply["type"] != "error" || reply["code"] != code || reply["text"] == "") {
			t.Fatalf("%s: body %v, want {type: error, code: %v, text}", what, reply, code)
		}
		seen[status] = true
	}
	status, g := c.op(0, 0, "grant", lv("s", "cs1"))
	check("grant", status, 200, g, 0)
	status, r := c.op(1, 1, "renew", lv("s", "cs2"))
	check("renew by another server", status, 409, r, 22)

	status, r, _, _ = c.post(0, "/v1/lease_grant", []byte(`{"chunk_handle":`))
	check("bad JSON", status, 400, r, 12)
	if _, want := lease.DecodeRequest("lease_grant", []byte(`{"chunk_handle":`)); r["text"] != want.Text {
		t.Fatalf("bad JSON text %q, the Maelstrom node's decoding says %q", r["text"], want.Text)
	}
	for _, bad := range []string{`{"chunk_handle":5,"server":"cs1"}`, `{"chunk_handle":"c","server":"cs1","lease_ms":-1}`, `{"chunk_handle":"c","server":"cs1"}`} {
		typ := "lease_grant"
		if strings.Contains(bad, `"c","server":"cs1"}`) {
			typ = "lease_release" // no token
		}
		status, r, _, _ = c.post(1, "/v1/"+typ, []byte(bad))
		check("bad field "+bad, status, 400, r, 12)
		if want := maelstromErrorText(t, typ, bad); r["text"] != want {
			t.Fatalf("%s %s: text %q, the Maelstrom node answers %q", typ, bad, r["text"], want)
		}
	}
	status, r, _, _ = c.post(2, "/v1/lease_steal", []byte(`{}`))
	check("unknown endpoint", status, 404, r, 10)
	status, r, _, _ = c.post(2, "/nothing", []byte(`{}`))
	check("unknown path", status, 404, r, 10)
	resp, err := c.client.Get(c.url(2, "/v1/lease_grant"))
	if err != nil {
		t.Fatal(err)
	}
	var mr map[string]any
	json.NewDecoder(resp.Body).Decode(&mr)
	resp.Body.Close()
	check("GET on a lease endpoint", resp.StatusCode, 405, mr, 10)
	if resp.Header.Get("Allow") != "POST" {
		t.Fatalf("405 without Allow: POST")
	}
	big := append(append([]byte(`{"chunk_handle":"`), bytes.Repeat([]byte("x"), 70<<10)...), `","server":"cs1"}`...)
	status, r, _, _ = c.post(0, "/v1/lease_grant", big)
	check("a 70 KiB body", status, 413, r, 12)

	// The peers stop: a grant of a new chunk sends prepare only (503), a
	// renewal of a live lease sends a propose at once (504).
	c.pause(1)
	c.pause(2)
	status, r, resp, _ = c.post(0, "/v1/lease_grant", []byte(`{"chunk_handle":"new","server":"cs3"}`))
	check("grant without a majority", status, 503, r, 11)
	if resp.Header.Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
	status, r = c.op(0, 0, "renew", lv("s", "cs1"))
	check("renew without a majority", status, 504, r, 0)
	// A client that gives up while its request waits in the core leaves
	// nothing behind: the core's answer is dropped, the request counted.
	c.abandon(0, "/v1/lease_grant", `{"chunk_handle":"gone","server":"cs4"}`, "chunklease_requests_in_flight 1",
		`chunklease_requests_total{outcome="abandoned",type="lease_grant"} 1`)
	// So does a client that gives up on a batch: each of its calls, and
	// the batch.
	c.abandon(0, batchPath, `[{"op":"lease_grant","body":{"chunk_handle":"gone1","server":"cs4"}},`+
		`{"op":"lease_grant","body":{"chunk_handle":"gone2","server":"cs4"}},{"op":"lease_grant","body":{"chunk_handle":"gone3","server":"cs4"}}]`,
		"chunklease_core_pending_requests 3",
		`chunklease_requests_total{outcome="abandoned",type="lease_grant"} 4`, `chunklease_requests_total{outcome="abandoned",type="batch"} 1`)
	c.resume(1)
	c.resume(2)
	for _, want := range []int{200, 400, 404, 405, 409, 413, 503, 504} {
		if !seen[want] {
			t.Errorf("status %d never reached", want)
		}
	}
	c.hist.Judge()
}

// maelstromErrorText is the text the Maelstrom node answers the request
// body (with its type) with.
func maelstromErrorText(t *testing.T, typ, body string) string {
	t.Helper()
	line := fmt.Sprintf(`{"src":"c1","dest":"n1","body":{"type":%q,"msg_id":2,%s}`, typ, strings.TrimPrefix(body, "{"))
	in := `{"src":"c0","dest":"n1","body":{"type":"init","msg_id":1,"node_id":"n1","node_ids":["n1"]}}` + "\n" + line + "\n"
	var out, errOut bytes.Buffer
	cmd := exec.Command(nodeBin)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(in), &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("the Maelstrom node: %v: %s", err, errOut.String())
	}
	for _, l := range strings.Split(out.String(), "\n") {
		var m struct {
			Body struct {
				Type      string `json:"type"`
				InReplyTo int    `json:"in_reply_to"`
				Text      string `json:"text"`
			} `json:"body"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Body.InReplyTo == 2 && m.Body.Type == "error" {
			return m.Body.Text
		}
	}
	t.Fatalf("the Maelstrom node did not refuse %s: %s", line, out.String())
	return ""
}

// TestServeReadinessAndMetrics: a member alone is not ready (no majority
// reachable) and says why; once the others are up it is; /metrics parses
// as Prometheus text and counts what the clients did.
func TestServeReadinessAndMetrics(t *testing.T) {
	t.Parallel()
	c := newServeCluster(t, 3)
	c.start(0, "-boot-wait-ms", "0")
	c.poll(5*time.Second, "n1 answering", func() bool { s, _ := c.get(0, "/readyz"); return s != 0 }, 0)
	if s, body := c.get(0, "/readyz"); s != http.StatusServiceUnavailable || !strings.Contains(body, "needed") {
		t.Fatalf("/readyz of a lone member: %d %s, want 503 naming the acceptors needed", s, body)
	}
	if s, body := c.get(0, "/healthz"); s != http.StatusOK || !strings.Contains(body, `"up"`) {
		t.Fatalf("/healthz: %d %s", s, body)
	}
	c.start(1, "-boot-wait-ms", "0")
	c.start(2, "-boot-wait-ms", "0")
	for i := range 3 {
		c.waitReady(i, 10*time.Second)
	}
	c.poll(10*time.Second, "n1 reaching every acceptor", func() bool {
		_, body := c.get(0, "/readyz")
		return strings.Contains(body, `"acceptors_reachable":3`)
	}, 0)
	const grants = 5
	var wg sync.WaitGroup
	for k := range grants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s, r := c.op(k, 0, "grant", lv(fmt.Sprintf("m%d", k), "cs1")); s != 200 {
				t.Errorf("grant %d: %d %v", k, s, r)
			}
		}()
	}
	wg.Wait()
	c.op(9, 0, "check", lv("nothing-here", ""))
	_, text := c.get(0, "/metrics")
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	value := func(name string, labels map[string]string) float64 {
		for _, m := range fams[name].GetMetric() {
			match := true
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					match = false
				}
			}
			if match {
				switch {
				case m.Counter != nil:
					return m.Counter.GetValue()
				case m.Gauge != nil:
					return m.Gauge.GetValue()
				case m.Histogram != nil:
					return float64(m.Histogram.GetSampleCount())
				}
			}
		}
		t.Fatalf("/metrics has no %s %v", name, labels)
		return 0
	}
	for _, w := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"chunklease_requests_total", map[string]string{"type": "lease_grant", "outcome": "ok"}, grants},
		{"chunklease_requests_total", map[string]string{"type": "lease_check", "outcome": "ok"}, 1},
		{"chunklease_request_duration_seconds", map[string]string{"type": "lease_grant"}, grants},
		{"chunklease_live_leases", nil, grants},
		{"chunklease_peers_connected", map[string]string{"direction": "out"}, 2},
		{"chunklease_ready", nil, 1},
	} {
		if got := value(w.name, w.labels); got != w.want {
			t.Errorf("%s %v = %v, want %v", w.name, w.labels, got, w.want)
		}
	}
	// The grants ran at once: some may have found their loop busy.
	if got := value("chunklease_loop_calls_posted_total", map[string]string{"loop": "0"}); got < 0 || got > grants+1 {
		t.Errorf("chunklease_loop_calls_posted_total{loop=0} = %v, want 0 to %d (the calls made)", got, grants+1)
	}
	c.hist.Judge()
}
