package server

import (
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"chunklease/lease"
)

// serveMetrics is what GET /metrics shows (Prometheus text format):
// requests by type and outcome, their latency, quorum timeouts, the
// peers and their frames, the core's live leases.
type serveMetrics struct {
	handler  http.Handler
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	quorum   *prometheus.CounterVec
	// the hot path's series, resolved once: ok and latency by op
	okByOp      map[lease.Op]prometheus.Counter
	latencyByOp map[lease.Op]prometheus.Observer
}

func newServeMetrics(n *serveNode) *serveMetrics {
	m := &serveMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chunklease_requests_total",
			Help: "Client requests by type (the endpoint; other for unknown paths) and outcome (ok; held: a grant answered 409 naming another primary; or the refusal: malformed, not_supported, precondition_failed, unavailable, timeout, unauthorized, wrong_method, too_large, abandoned when the client left first)."},
			[]string{"type", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "chunklease_request_duration_seconds",
			Help:    "Time from reading a lease request to answering it, by type (requests the core answered).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}},
			[]string{"type"}),
		quorum: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chunklease_quorum_timeouts_total",
			Help: "Requests the core answered without a majority in time, by code: 11 (definite: nothing was proposed) or 0 (indefinite: proposes went out)."},
			[]string{"code"}),
		okByOp: map[lease.Op]prometheus.Counter{}, latencyByOp: map[lease.Op]prometheus.Observer{},
	}
	for typ, op := range lease.Ops {
		m.okByOp[op] = m.requests.WithLabelValues(typ, "ok")
		m.latencyByOp[op] = m.latency.WithLabelValues(typ)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.requests, m.latency, m.quorum, &nodeCollector{n: n},
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(liveHeap)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: n.log})
	return m
}

// liveHeap adds go_gc_heap_live_bytes to Go's default metrics: the heap
// the last collection found reachable, which is what the node's state
// costs. go_memstats_heap_alloc_bytes also counts what was allocated
// since, garbage included (up to as much again between collections),
// and even right after a collection what was allocated while it ran.
var liveHeap = collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/heap/live:bytes$`)}

// count adds one request of type label with outcome.
func (m *serveMetrics) count(label, outcome string) {
	if op, ok := lease.Ops[label]; ok && outcome == "ok" {
		m.okByOp[op].Inc()
		return
	}
	m.requests.WithLabelValues(label, outcome).Inc()
}

func (m *serveMetrics) observe(op lease.Op, d time.Duration) {
	m.latencyByOp[op].Observe(d.Seconds())
}

func (m *serveMetrics) quorumTimeout(code int) {
	if code == lease.CodeTimeout {
		m.quorum.WithLabelValues("0").Inc()
	} else {
		m.quorum.WithLabelValues("11").Inc()
	}
}

// nodeCollector reads the peers' counters and asks the loop for the
// core's figures at every scrape.
type nodeCollector struct{ n *serveNode }

var (
	descPeerUp     = prometheus.NewDesc("chunklease_peer_connected", "1 while the connection with a peer is up, by peer and direction (out: ours to it, in: its to us).", []string{"peer", "direction"}, nil)
	descPeersUp    = prometheus.NewDesc("chunklease_peers_connected", "Peers with an established connection, by direction.", []string{"direction"}, nil)
	descSent       = prometheus.NewDesc("chunklease_peer_frames_sent_total", "Frames queued for a peer.", []string{"peer"}, nil)
	descWrites     = prometheus.NewDesc("chunklease_peer_writes_total", "Writes to a peer's connection; frames sent per write is the batching.", []string{"peer"}, nil)
	descReceived   = prometheus.NewDesc("chunklease_peer_frames_received_total", "Frames a peer sent that reached the event loop.", []string{"peer"}, nil)
	descDropped    = prometheus.NewDesc("chunklease_peer_frames_dropped_total", "Frames dropped before sending (a message loss, which the protocol tolerates), by peer and reason: queue_full, not_connected, too_large.", []string{"peer", "reason"}, nil)
	descRefused    = prometheus.NewDesc("chunklease_peer_connections_refused_total", "Incoming peer connections refused (not a member's certificate, other cluster settings, failed handshake).", nil, nil)
	descMalformed  = prometheus.NewDesc("chunklease_peer_frames_malformed_total", "Frames from members that did not decode (skipped).", nil, nil)
	descLive       = prometheus.NewDesc("chunklease_live_leases", "Chunks whose lease this node's acceptor protects now.", nil, nil)
	descChunks     = prometheus.NewDesc("chunklease_chunks", "Chunk instances this node's acceptor keeps (idle ones until reclaimed).", nil, nil)
	descPending    = prometheus.NewDesc("chunklease_core_pending_requests", "Client requests the core has not answered.", nil, nil)
	descInflight   = prometheus.NewDesc("chunklease_requests_in_flight", "Client requests admitted and not yet answered.", nil, nil)
	descReady      = prometheus.NewDesc("chunklease_ready", "1 when /readyz answers 200.", nil, nil)
	descPeerAnswer = prometheus.NewDesc("chunklease_peer_answering", "1 while a peer answers pings within the readiness window (it counts for /readyz).", []string{"peer"}, nil)
	descClientConn = prometheus.NewDesc("chunklease_client_connections", "Client connections open now (at most -max-client-conns).", nil, nil)
	descConnLimit  = prometheus.NewDesc("chunklease_client_connections_closed_total", "Client connections closed at the connection limits (-max-client-conns, -max-client-conns-per-addr), by reason: shed (a quiet one, to make room for a new one), overloaded (a new one answered 503 with Retry-After, none being quiet), refused (a new one closed at once, beyond the overload answers running at once).", []string{"reason"}, nil)
	descEpoch      = prometheus.NewDesc("chunklease_membership_epoch", "The epoch of this node's configuration of the acceptor set (0: the start set; each membership change adds one).", nil, nil)
	descMembers    = prometheus.NewDesc("chunklease_membership_members", "The members of this node's configuration, one series each, value 1 (member=\"<id>\").", []string{"member"}, nil)
	descPosted     = prometheus.NewDesc("chunklease_loop_calls_posted_total", "Client calls and batch shares that found their loop busy and were left for the goroutine running it, by loop (the others ran at once on their handler's goroutine); a large share of the requests means the loop is the bottleneck (more -loops, or more members).", []string{"loop"}, nil)
	descIsMember   = prometheus.NewDesc("chunklease_membership_is_member", "1 when this node is a member of its configuration (it votes once past its boot wait and recovery), 0 for a learner.", nil, nil)
	nodeCollectors = []*prometheus.Desc{descPeerUp, descPeersUp, descSent, descWrites, descReceived, descDropped, descRefused, descMalformed, descLive, descChunks, descPending, descInflight, descReady,
		descPeerAnswer, descClientConn, descConnLimit, descEpoch, descMembers, descIsMember, descPosted}
)

func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range nodeCollectors {
		ch <- d
	}
}

func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.n
	st := n.peers.Stats()
	var out, in int
	for _, l := range st.Links {
		out += b2i(l.OutUp)
		in += b2i(l.InUp)
		ch <- prometheus.MustNewConstMetric(descPeerUp, prometheus.GaugeValue, float64(b2i(l.OutUp)), l.ID, "out")
		ch <- prometheus.MustNewConstMetric(descPeerUp, prometheus.GaugeValue, float64(b2i(l.InUp)), l.ID, "in")
		ch <- prometheus.MustNewConstMetric(descSent, prometheus.CounterValue, float64(l.Sent), l.ID)
		ch <- prometheus.MustNewConstMetric(descWrites, prometheus.CounterValue, float64(l.Writes), l.ID)
		ch <- prometheus.MustNewConstMetric(descReceived, prometheus.CounterValue, float64(l.Received), l.ID)
		ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(l.DroppedFull), l.ID, "queue_full")
		ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(l.DroppedDown), l.ID, "not_connected")
		ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(l.DroppedBig), l.ID, "too_large")
		ch <- prometheus.MustNewConstMetric(descPeerAnswer, prometheus.GaugeValue, float64(b2i(n.peers.Reachable(l.ID))), l.ID)
	}
	if n.conns != nil {
		open, shed, overloaded, refused := n.conns.counts()
		ch <- prometheus.MustNewConstMetric(descClientConn, prometheus.GaugeValue, float64(open))
		ch <- prometheus.MustNewConstMetric(descConnLimit, prometheus.CounterValue, float64(shed), "shed")
		ch <- prometheus.MustNewConstMetric(descConnLimit, prometheus.CounterValue, float64(overloaded), "overloaded")
		ch <- prometheus.MustNewConstMetric(descConnLimit, prometheus.CounterValue, float64(refused), "refused")
	}
	ch <- prometheus.MustNewConstMetric(descPeersUp, prometheus.GaugeValue, float64(out), "out")
	ch <- prometheus.MustNewConstMetric(descPeersUp, prometheus.GaugeValue, float64(in), "in")
	ch <- prometheus.MustNewConstMetric(descRefused, prometheus.CounterValue, float64(st.Refused))
	ch <- prometheus.MustNewConstMetric(descMalformed, prometheus.CounterValue, float64(st.Malformed))
	if cs, ok := n.coreStats(); ok {
		ch <- prometheus.MustNewConstMetric(descLive, prometheus.GaugeValue, float64(cs.LiveLeases))
		ch <- prometheus.MustNewConstMetric(descChunks, prometheus.GaugeValue, float64(cs.Chunks))
		ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(cs.Pending))
	}
	for _, l := range n.loops {
		ch <- prometheus.MustNewConstMetric(descPosted, prometheus.CounterValue, float64(l.handedOver.Load()), strconv.Itoa(l.index))
	}
	ch <- prometheus.MustNewConstMetric(descInflight, prometheus.GaugeValue, float64(n.inflight.count()))
	ready, _, _ := n.readiness()
	ch <- prometheus.MustNewConstMetric(descReady, prometheus.GaugeValue, float64(b2i(ready)))
	conf, member := n.config.Load(), false
	ch <- prometheus.MustNewConstMetric(descEpoch, prometheus.GaugeValue, float64(conf.Epoch))
	for _, id := range conf.Members {
		member = member || id == n.cfg.id
		ch <- prometheus.MustNewConstMetric(descMembers, prometheus.GaugeValue, 1, id)
	}
	ch <- prometheus.MustNewConstMetric(descIsMember, prometheus.GaugeValue, float64(b2i(member)))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// coreStats asks every loop for its core's figures and adds them up
// (false if a loop does not answer within a second, or has stopped).
func (n *serveNode) coreStats() (lease.Stats, bool) {
	each := make([]lease.Stats, len(n.loops))
	if !n.onEveryLoop(time.Second, func(l *coreLoop) { each[l.index] = l.drv.Core().Stats(l.clock.Now()) }) {
		return lease.Stats{}, false
	}
	var sum lease.Stats
	for _, s := range each {
		sum.Chunks += s.Chunks
		sum.LiveLeases += s.LiveLeases
		sum.Pending += s.Pending
	}
	return sum, true
}
