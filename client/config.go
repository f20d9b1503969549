package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config says how to reach the service. Only Endpoints is required.
type Config struct {
	// Endpoints are the client URLs of the members, e.g.
	// "http://127.0.0.1:7001" (what scripts/cluster.sh prints as
	// ENDPOINTS). A bare host:port means http://, or https:// when CAFile
	// or TLS is set. Calls go to one member at a time, in this order from
	// the last one that answered.
	Endpoints []string
	// Token is the bearer token sent with every request (Authorization:
	// Bearer TOKEN); "" sends none.
	Token string
	// CAFile is a PEM file with the CA that signed the members' client
	// certificates, for https endpoints; "" trusts the system's roots.
	CAFile string
	// TLS is the TLS configuration for https endpoints, used as given
	// (set RootCAs or client certificates here); it cannot be combined
	// with CAFile.
	TLS *tls.Config
	// MaxAttempts bounds the attempts one call makes across the members;
	// 0 means three rounds (3 per endpoint).
	MaxAttempts int
	// AttemptTimeout bounds one attempt at one member; 0 means 3 s, above
	// a member's longest quorum timeout (2 s) so that a healthy member's
	// own 504 arrives first. With a context deadline, an attempt also gets
	// at most half of the time left, so a stuck member leaves time for
	// another.
	AttemptTimeout time.Duration
	// MaxRetryAfter caps how long a member's Retry-After keeps calls
	// away from it; 0 means 2 s.
	MaxRetryAfter time.Duration
	// MaxIdleConnsPerHost is how many kept-alive connections to each
	// member stay open between calls; 0 means 128 (enough for 64
	// concurrent callers with room to spare).
	MaxIdleConnsPerHost int
	// DialContext replaces the TCP dialer, e.g. for a unix socket or an
	// in-memory network in tests; nil dials TCP.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Seed seeds the jitter of the backoffs; 0 draws one.
	Seed uint64
	// Batching sends lease calls made while this client is busy handing
	// another request to the same member together, as one POST /v1/batch
	// (batch.go): for programs with many calls in flight on few cores, it
	// cuts the CPU a call costs on both sides. There is no cap on the
	// requests in flight: a call made while the client is not busy goes
	// out at once, alone. Each call keeps its own deadline, failover and
	// outcome. A member without the batch endpoint gets calls alone.
	Batching bool
}

// Client calls the lease service. It is safe for concurrent use; make one
// per process and share it (it holds the kept-alive connections).
type Client struct {
	endpoints []*endpoint
	preferred atomic.Int32 // the endpoint that answered last
	// header is every request's header, shared read-only (a transport
	// never changes a request's header).
	header      http.Header
	transport   *http.Transport
	maxAttempts int
	attemptMax  time.Duration
	retryMax    time.Duration
	epoch       time.Time // origin of the endpoints' cool-down times
	batching    bool

	randMu sync.Mutex
	rand   *rand.Rand
}

// New checks cfg and returns a Client. It does not contact the service.
func New(cfg Config) (*Client, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("no endpoints: give the members' client URLs, e.g. http://127.0.0.1:7001 (scripts/cluster.sh up prints them as ENDPOINTS=...)")
	}
	tlsCfg, err := tlsConfig(cfg)
	if err != nil {
		return nil, err
	}
	c := &Client{
		maxAttempts: orInt(cfg.MaxAttempts, 3*len(cfg.Endpoints)),
		attemptMax:  orDuration(cfg.AttemptTimeout, 3*time.Second),
		retryMax:    orDuration(cfg.MaxRetryAfter, 2*time.Second),
		epoch:       time.Now(),
		rand:        newRand(cfg.Seed),
		transport:   newTransport(cfg, tlsCfg),
		header:      http.Header{"Content-Type": {"application/json"}},
		batching:    cfg.Batching,
	}
	if cfg.Token != "" {
		if strings.ContainsFunc(cfg.Token, func(r rune) bool { return r <= ' ' || r > '~' }) {
			return nil, errors.New("the bearer token has spaces or non-ASCII characters; use the cluster's client token as is")
		}
		c.header["Authorization"] = []string{"Bearer " + cfg.Token}
	}
	scheme := "http"
	if tlsCfg != nil {
		scheme = "https"
	}
	for i, raw := range cfg.Endpoints {
		ep, err := newEndpoint(raw, scheme, int32(i))
		if err != nil {
			return nil, err
		}
		c.endpoints = append(c.endpoints, ep)
	}
	return c, nil
}

// Close closes the kept-alive connections. Calls still in flight finish;
// the Client stays usable (new calls open new connections).
func (c *Client) Close() { c.transport.CloseIdleConnections() }

// Endpoints returns the members' base URLs in the configured order.
func (c *Client) Endpoints() []string {
	out := make([]string, len(c.endpoints))
	for i, ep := range c.endpoints {
		out[i] = ep.base
	}
	return out
}

// newTransport is tuned for many small requests over few kept-alive
// connections: no compression (bodies are ~100 bytes), no proxy from the
// environment (a proxy adds a hop whose failures are unknown outcomes),
// HTTP/1.1 only (the service speaks nothing else), and enough idle
// connections per member for every concurrent caller.
func newTransport(cfg Config, tlsCfg *tls.Config) *http.Transport {
	dial := cfg.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 15 * time.Second}).DialContext
	}
	dial = traceDial(dial)
	perHost := orInt(cfg.MaxIdleConnsPerHost, 128)
	return &http.Transport{
		DialContext:         dial,
		TLSClientConfig:     tlsCfg,
		TLSHandshakeTimeout: 5 * time.Second,
		DisableCompression:  true,
		MaxIdleConns:        perHost * len(cfg.Endpoints),
		MaxIdleConnsPerHost: perHost,
		// Shorter than the service's idle timeout (30 s), so the client,
		// not the member, closes an idle connection: a request sent on a
		// connection the member is closing has an unknown outcome.
		IdleConnTimeout:   20 * time.Second,
		ForceAttemptHTTP2: false,
		TLSNextProto:      map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
}

// traceDial tells the request that made the transport dial that a dial
// started (httptrace's ConnectStart), as net.Dialer does, also for a
// dialer of the caller's (Config.DialContext): a batched member's queue
// is held while a request is being written, not while it waits for the
// network (batch.go). The transport dials with the request's context
// values, its trace among them.
func traceDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if t := httptrace.ContextClientTrace(ctx); t != nil && t.ConnectStart != nil {
			t.ConnectStart(network, addr)
		}
		return dial(ctx, network, addr)
	}
}

func tlsConfig(cfg Config) (*tls.Config, error) {
	switch {
	case cfg.TLS != nil && cfg.CAFile != "":
		return nil, errors.New("both a CA file and a TLS configuration are set; put the CA into the TLS configuration's RootCAs, or give only the CA file")
	case cfg.TLS != nil:
		return cfg.TLS.Clone(), nil
	case cfg.CAFile == "":
		for _, e := range cfg.Endpoints {
			if strings.HasPrefix(e, "https://") {
				return &tls.Config{MinVersion: tls.VersionTLS12}, nil
			}
		}
		return nil, nil
	}
	pem, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("CA file: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s holds no PEM certificate; give the cluster CA's certificate (e.g. .cluster/certs/ca.crt)", cfg.CAFile)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}, nil
}

// endpoint is one member's client address with its per-operation URLs
// and its cool-down state.
type endpoint struct {
	base string
	idx  int32 // in Client.endpoints; -1 for a node named outside them
	urls [numOps]*url.URL
	// batchURL is POST /v1/batch; batch is the queue of batched calls.
	batchURL *url.URL
	batch    batcher
	// coolUntil is when calls may come back (ns since Client.epoch); a
	// member that failed, or asked for it with Retry-After, is skipped
	// until then while another member is available.
	coolUntil atomic.Int64
	fails     atomic.Int32 // consecutive failures, for the backoff
	failedAt  atomic.Int64 // when the last of them was counted (as coolUntil)
	askedWait atomic.Bool  // the cool-down is the member's Retry-After
}

func newEndpoint(raw, scheme string, idx int32) (*endpoint, error) {
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "://") {
		raw = scheme + "://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("endpoint %q is not a member's client URL; write it as http://HOST:PORT (or https://HOST:PORT)", raw)
	}
	ep := &endpoint{base: u.Scheme + "://" + u.Host, idx: idx}
	for op := range numOps {
		ep.urls[op] = &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/v1/" + op.String()}
	}
	ep.batchURL = &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/v1/batch"}
	return ep, nil
}

func orInt(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func orDuration(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

// newRand returns a generator seeded from seed, or from a fresh draw.
func newRand(seed uint64) *rand.Rand {
	if seed == 0 {
		seed = rand.Uint64()
	}
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// jitter returns d scaled by a factor drawn uniformly from [1-f, 1+f].
func (c *Client) jitter(d time.Duration, f float64) time.Duration {
	c.randMu.Lock()
	x := c.rand.Float64()
	c.randMu.Unlock()
	return time.Duration(float64(d) * (1 - f + 2*f*x))
}
