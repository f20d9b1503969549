// Command abusecheck attacks one lease-node serve member over loopback
// while a well-behaved client uses it, and reports what the client got
// (scripts/abuse_check.sh runs it against a cluster.sh cluster).
//
//	abusecheck -target http://127.0.0.1:PORT [-slowloris 2000] [-greedy 2000]
//	           [-churn 1000] [-calls 200] [-min-ok 190] [-max-p99-ms 1000]
//
// At once, each from its own loopback address (so that the member's
// per-address limit sees four clients, as it would see four hosts):
//
//   - slowloris (127.0.0.2): -slowloris connections, each sending a request
//     head one byte a second and never finishing it; one the member closes
//     is opened again (at most 200 new ones a second in all);
//   - greedy (127.0.0.3): -greedy keep-alive connections, each sending
//     lease_grant after lease_grant as fast as its answers come; a 503
//     (which closes the connection) is counted and the connection opened
//     again, ignoring Retry-After (at most 500 new ones a second in all);
//   - churn (127.0.0.4): -churn connections a second that send nothing,
//     each kept until the member closes it (10 s at most);
//   - well-behaved (127.0.0.5): once the attacks run (-warmup), -calls
//     lease_grant calls one after another, each on a new connection, with
//     a 5 s timeout.
//
// Everything stops by itself: the attacks end when the well-behaved
// client is done, and every connection is closed. Output: a line per
// actor, the member's connection metrics, and last exactly
//
//	abuse: well-behaved ok=N/CALLS p99_ms=X greedy-503=N resets-to-well-behaved=N
//
// ok counts calls answered 200; resets are calls whose connection was
// reset or closed before an answer. Exit status 1 when ok < -min-ok, a
// reset reached the well-behaved client, or p99 >= -max-p99-ms (0: not
// checked); 2 for bad usage or a member that does not answer at all.
//
// -control is the check's negative control: instead of -target it attacks
// a listener of its own that closes every connection unanswered (what a
// member did at its connection limit before it answered 503), and must
// then exit 1.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type config struct {
	target                       *url.URL
	slowloris, greedy, churn     int
	calls, minOK                 int
	maxP99Ms                     float64
	warmup                       time.Duration
	fromSlow, fromGreedy, fromCh string
	fromWell                     string
	control                      bool
}

func main() {
	c, err := parse(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "abusecheck:", err)
		os.Exit(2)
	}
	os.Exit(run(c, os.Stdout))
}

func parse(args []string) (config, error) {
	fs := flag.NewFlagSet("abusecheck", flag.ContinueOnError)
	target := fs.String("target", "", "the member's client URL (http://127.0.0.1:PORT): loopback only")
	c := config{}
	fs.IntVar(&c.slowloris, "slowloris", 2000, "slowloris connections")
	fs.IntVar(&c.greedy, "greedy", 2000, "the greedy client's keep-alive connections")
	fs.IntVar(&c.churn, "churn", 1000, "silent connects a second")
	fs.IntVar(&c.calls, "calls", 200, "the well-behaved client's calls")
	fs.IntVar(&c.minOK, "min-ok", 190, "calls that must be answered 200")
	fs.Float64Var(&c.maxP99Ms, "max-p99-ms", 1000, "the well-behaved calls' p99 must be below this (0: not checked)")
	fs.DurationVar(&c.warmup, "warmup", 3*time.Second, "how long the attacks run before the well-behaved client starts")
	control := fs.Bool("control", false, "the negative control: attack a listener of its own that closes every connection unanswered")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if *control {
		addr, err := closingListener()
		if err != nil {
			return c, err
		}
		*target, c.control = "http://"+addr, true
	}
	u, err := url.Parse(*target)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return c, fmt.Errorf("-target %q is not an http://host:port URL", *target)
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return c, fmt.Errorf("-target %s is not a loopback address: this tool attacks only loopback", u.Host)
	}
	c.target = u
	c.fromSlow, c.fromGreedy, c.fromCh, c.fromWell = "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"
	return c, nil
}

// attack is what the attackers share: the stop signal, their counters.
type attack struct {
	c        config
	stop     chan struct{}
	wg       sync.WaitGroup
	reopen   *pacer // slowloris reopenings, 200 a second in all
	redial   *pacer // greedy reopenings, 500 a second in all
	open     atomic.Int64
	counters map[string]*atomic.Int64
}

func (a *attack) count(name string) { a.counters[name].Add(1) }

func run(c config, out io.Writer) int {
	if status, err := get(c.target.String() + "/healthz"); !c.control && (err != nil || status != http.StatusOK) {
		fmt.Fprintf(out, "abusecheck: %s/healthz answered %d (%v) before the attack\n", c.target, status, err)
		return 2
	}
	a := &attack{c: c, stop: make(chan struct{}), reopen: newPacer(200), redial: newPacer(500), counters: map[string]*atomic.Int64{}}
	for _, k := range []string{"slow-opened", "slow-closed", "greedy-ok", "greedy-503", "greedy-other", "greedy-broken", "greedy-dial-failed",
		"churn-opened", "churn-closed", "churn-dial-failed"} {
		a.counters[k] = new(atomic.Int64)
	}
	started := time.Now()
	for range c.slowloris {
		a.go1(a.slowloris)
	}
	for i := range c.greedy {
		a.go1(func() { a.greedyConn(i) })
	}
	if c.churn > 0 {
		a.go1(a.churnLoop)
	}
	time.Sleep(c.warmup) // the attacks take hold
	lat, ok, resets, fails := wellBehaved(c)
	close(a.stop)
	a.wg.Wait()
	metrics := memberMetrics(c.target.String())
	elapsed := time.Since(started).Round(time.Millisecond)

	k := func(n string) int64 { return a.counters[n].Load() }
	fmt.Fprintf(out, "slowloris (%s): %d connections held, %d opened in all, %d closed by the member\n", c.fromSlow, c.slowloris, k("slow-opened"), k("slow-closed"))
	fmt.Fprintf(out, "greedy (%s): %d connections: %d grants answered 200, %d answered 503, %d other answers, %d connections broken, %d dials failed\n",
		c.fromGreedy, c.greedy, k("greedy-ok"), k("greedy-503"), k("greedy-other"), k("greedy-broken"), k("greedy-dial-failed"))
	fmt.Fprintf(out, "churn (%s): %d silent connects a second: %d opened, %d closed by the member, %d dials failed\n", c.fromCh, c.churn, k("churn-opened"), k("churn-closed"), k("churn-dial-failed"))
	p50, p99 := percentile(lat, 50), percentile(lat, 99)
	fmt.Fprintf(out, "well-behaved (%s): %d calls, %d answered 200, p50 %.0f ms, p99 %.0f ms, max %.0f ms; failures: %s\n",
		c.fromWell, c.calls, ok, p50, p99, percentile(lat, 100), summary(fails))
	fmt.Fprintf(out, "member %s after %v: %s\n", c.target.Host, elapsed, metrics)
	fmt.Fprintf(out, "abuse: well-behaved ok=%d/%d p99_ms=%.0f greedy-503=%d resets-to-well-behaved=%d\n", ok, c.calls, p99, k("greedy-503"), resets)
	if ok < c.minOK || resets > 0 || (c.maxP99Ms > 0 && p99 >= c.maxP99Ms) {
		return 1
	}
	return 0
}

func (a *attack) go1(f func()) {
	a.wg.Add(1)
	go func() { defer a.wg.Done(); f() }()
}

func (a *attack) stopped() bool {
	select {
	case <-a.stop:
		return true
	default:
		return false
	}
}

// dial connects to the target from the loopback address from, giving up
// when the attack stops.
func (a *attack) dial(from string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second, Cancel: a.stop}
	return d.Dial("tcp", a.c.target.Host)
}

// slowloris keeps one connection sending a request head a byte a second,
// opening it again when the member closes it.
func (a *attack) slowloris() {
	head := "POST /v1/lease_grant HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 4096)
	for first := true; !a.stopped(); first = false {
		if !first && !a.reopen.wait(a.stop) {
			return
		}
		conn, err := a.dial(a.c.fromSlow)
		if err != nil {
			continue
		}
		a.count("slow-opened")
		closed := false
		for i := 0; i < len(head) && !a.stopped() && !closed; i++ {
			if _, err := conn.Write([]byte{head[i]}); err != nil {
				closed = true
				break
			}
			conn.SetReadDeadline(time.Now().Add(time.Second))
			if _, err := conn.Read(make([]byte, 512)); !errors.Is(err, os.ErrDeadlineExceeded) {
				closed = true // an answer (503) or a close: either way, done with
			}
		}
		if closed {
			a.count("slow-closed")
		}
		conn.Close()
	}
}

// greedyConn sends grants on one keep-alive connection as fast as they
// are answered; a 503 closes it, and it is opened again at once.
func (a *attack) greedyConn(i int) {
	body := fmt.Sprintf(`{"chunk_handle":"greedy-%d","server":"greedy","lease_ms":1000}`, i)
	req := fmt.Sprintf("POST /v1/lease_grant HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", a.c.target.Host, len(body), body)
	for first := true; !a.stopped(); first = false {
		if !first && !a.redial.wait(a.stop) {
			return
		}
		conn, err := a.dial(a.c.fromGreedy)
		if err != nil {
			if !a.stopped() {
				a.count("greedy-dial-failed")
			}
			continue
		}
		br := bufio.NewReader(conn)
		for !a.stopped() {
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.WriteString(conn, req); err != nil {
				a.count("greedy-broken")
				break
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				a.count("greedy-broken")
				break
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK:
				a.count("greedy-ok")
			case http.StatusServiceUnavailable:
				a.count("greedy-503")
			default:
				a.count("greedy-other")
			}
			if resp.Close {
				break
			}
		}
		conn.Close()
	}
}

// churnLoop opens -churn silent connections a second, each held until
// the member closes it or for 10 s.
func (a *attack) churnLoop() {
	p := newPacer(a.c.churn)
	for p.wait(a.stop) {
		a.go1(func() {
			conn, err := a.dial(a.c.fromCh)
			if err != nil {
				if !a.stopped() {
					a.count("churn-dial-failed")
				}
				return
			}
			defer conn.Close()
			a.count("churn-opened")
			done := make(chan struct{})
			defer close(done)
			go func() {
				select {
				case <-a.stop:
				case <-done:
				}
				conn.SetReadDeadline(time.Now())
			}()
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := conn.Read(make([]byte, 512)); !errors.Is(err, os.ErrDeadlineExceeded) {
				a.count("churn-closed")
			}
		})
	}
}

// wellBehaved makes the calls one after another, each on a new
// connection: latencies of every call (answered or not, in ms), how many
// were answered 200, how many were reset, and the other failures by kind.
func wellBehaved(c config) (lat []float64, ok, resets int, fails map[string]int) {
	fails = map[string]int{}
	for i := range c.calls {
		tr := &http.Transport{DisableKeepAlives: true,
			DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(c.fromWell)}, Timeout: 5 * time.Second}).DialContext}
		hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
		body := fmt.Sprintf(`{"chunk_handle":"well-%d","server":"well","lease_ms":1000}`, i)
		start := time.Now()
		resp, err := hc.Post(c.target.String()+"/v1/lease_grant", "application/json", strings.NewReader(body))
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		lat = append(lat, float64(time.Since(start))/float64(time.Millisecond))
		switch {
		case isReset(err):
			resets++
			fails["reset: "+kindOf(err)]++
		case err != nil:
			fails[kindOf(err)]++
		case resp.StatusCode == http.StatusOK:
			ok++
		default:
			fails[fmt.Sprintf("status %d", resp.StatusCode)]++
		}
		tr.CloseIdleConnections()
		time.Sleep(10 * time.Millisecond) // the client's own pace between calls
	}
	return lat, ok, resets, fails
}

// isReset reports whether a call's connection was reset or closed before
// its answer.
func isReset(err error) bool {
	return err != nil && (errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF))
}

var portRE = regexp.MustCompile(`:\d+`)

// kindOf names an error without its ports, so that alike ones add up.
func kindOf(err error) string { return portRE.ReplaceAllString(err.Error(), ":PORT") }

func summary(fails map[string]int) string {
	if len(fails) == 0 {
		return "none"
	}
	var parts []string
	for k, v := range fails {
		parts = append(parts, fmt.Sprintf("%d x %s", v, k))
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// percentile is the nearest-rank percentile p of xs (p = 100: the max).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// memberMetrics is the member's connection figures from /metrics.
func memberMetrics(base string) string {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return "metrics unavailable: " + err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var parts []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "chunklease_client_connections") {
			parts = append(parts, strings.TrimPrefix(line, "chunklease_"))
		}
	}
	return strings.Join(parts, ", ")
}

func get(u string) (int, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// closingListener listens on loopback and closes every connection as it
// accepts it, unanswered: the negative control's member. It runs until
// the process exits.
func closingListener() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	return ln.Addr().String(), nil
}

// pacer lets through at most rate events a second, evenly.
type pacer struct {
	mu   sync.Mutex
	next time.Time
	gap  time.Duration
}

func newPacer(rate int) *pacer { return &pacer{gap: time.Second / time.Duration(max(rate, 1))} }

// wait blocks until the next event may go; false once stop is closed.
func (p *pacer) wait(stop <-chan struct{}) bool {
	p.mu.Lock()
	now := time.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(p.gap)
	p.mu.Unlock()
	return sleep(stop, time.Until(at))
}

// sleep waits d unless stop closes first (then false).
func sleep(stop <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-stop:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-stop:
		return false
	case <-t.C:
		return true
	}
}
