package netns

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// delayPath is one receiving node's userspace delay path while some
// sender's packets to it are delayed: one netlink socket bound to one
// kernel queue per other node, a reader goroutine that takes the queued
// packets, and a scheduler goroutine that owns the delayQueue and gives
// each packet its accept verdict when it is due. Nothing else runs per
// node.
type delayPath struct {
	name     string // the receiving namespace, for messages
	logf     func(string, ...any)
	q        *nfqConn
	queues   []uint16  // every queue bound
	origin   time.Time // the zero of the delayQueue's clock
	arrivals chan arrival
	updates  chan map[uint16]source
	stop     chan struct{}
	reader   sync.WaitGroup
	sched    sync.WaitGroup
}

// source is one sender as a receiver's delay path sees it.
type source struct {
	fault PacketFault
	rng   *rand.Rand // the (receiver, sender) pair's stream
	stats *pathStats // the sender's
}

// arrival is what one read returned, each packet stamped with its
// arrival on the delayQueue's clock.
type arrival struct {
	pkts []queued
	atNs []int64
}

// maxReadLagNs bounds how far back a kernel timestamp may place an
// arrival: the wall clock can step, and no packet waits this long unread.
const maxReadLagNs = 10e9

// startDelayPath binds queues in n and starts the two goroutines with no
// source (every packet would go on at once) until update gives some.
func startDelayPath(n *Namespace, queues []uint16, logf func(string, ...any)) (*delayPath, error) {
	q, err := dialQueue(int(n.handle), queues)
	if err != nil {
		return nil, err
	}
	p := &delayPath{
		name:     n.name,
		logf:     logf,
		q:        q,
		queues:   queues,
		origin:   time.Now(),
		arrivals: make(chan arrival, 256),
		updates:  make(chan map[uint16]source),
		stop:     make(chan struct{}),
	}
	p.reader.Add(1)
	p.sched.Add(1)
	go p.read()
	go p.schedule()
	return p, nil
}

func (p *delayPath) now() int64 { return time.Since(p.origin).Nanoseconds() }

func (p *delayPath) stopping() bool {
	select {
	case <-p.stop:
		return true
	default:
		return false
	}
}

// maxReadFailures: a socket that fails this many reads in a row is
// broken; the path says so and stops reading (its packets then wait in
// the kernel until the fault stops, and are dropped past queueMaxLen).
const maxReadFailures = 100

// read hands every batch of queued packets to the scheduler until the
// socket is closed.
func (p *delayPath) read() {
	defer p.reader.Done()
	failures := 0
	for {
		pkts, err := p.q.receive(nil)
		if err != nil {
			if p.stopping() {
				return
			}
			if failures++; failures == maxReadFailures {
				p.logf("delay path in %s: %d reads failed in a row, it stops reading: %v", p.name, failures, err)
				return
			}
			continue
		}
		failures = 0
		if len(pkts) == 0 {
			continue
		}
		select {
		case p.arrivals <- p.stamp(pkts):
		case <-p.stop:
			return
		}
	}
}

// stamp places each packet's arrival on the monotonic clock: the kernel's
// wall-clock timestamp, taken back from now by how long it waited unread.
func (p *delayPath) stamp(pkts []queued) arrival {
	nowNs, nowUnix := p.now(), time.Now().UnixMicro()
	a := arrival{pkts: pkts, atNs: make([]int64, len(pkts))}
	for i, pkt := range pkts {
		a.atNs[i] = nowNs
		if pkt.arrivedUnix > 0 {
			lagNs := min(max((nowUnix-pkt.arrivedUnix)*1e3, 0), maxReadLagNs)
			a.atNs[i] = nowNs - lagNs
		}
	}
	return a
}

// scheduler is the state the scheduler goroutine owns.
type scheduler struct {
	p      *delayPath
	dq     *delayQueue
	stats  map[uint16]*pathStats
	lastID map[uint16]uint32 // the last id read per queue
	failed uint64            // verdicts that could not be sent
}

// schedule gives verdicts: at once for a packet the queue lets go on
// admission, at its due time for a held one. On stop it accepts every
// packet still queued, read or not, with one batch verdict per queue.
func (p *delayPath) schedule() {
	defer p.sched.Done()
	s := &scheduler{p: p, dq: newDelayQueue(), stats: map[uint16]*pathStats{}, lastID: map[uint16]uint32{}}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var due []heldPacket
	for {
		select {
		case a := <-p.arrivals:
			for i, pkt := range a.pkts {
				s.admit(a.atNs[i], pkt)
			}
		case <-timer.C:
			due = s.dq.popDue(p.now(), due[:0])
			s.releaseDue(due)
		case sources := <-p.updates:
			s.setSources(sources)
		case <-p.stop:
			for _, q := range p.queues {
				s.releaseAll(q)
			}
			return
		}
		p.rearm(timer, s.dq)
	}
}

func (s *scheduler) admit(atNs int64, pkt queued) {
	s.lastID[pkt.queue] = pkt.id
	st := s.stats[pkt.queue]
	if s.dq.admit(atNs, pkt.queue, pkt.id) {
		if st != nil {
			st.immediate.Add(1)
		}
		s.accept(pkt)
		return
	}
	st.delayed.Add(1) // held packets always have a source, so stats
	storeMax(&st.maxHeld, st.held.Add(1))
}

func (s *scheduler) releaseDue(due []heldPacket) {
	for _, h := range due {
		s.accept(queued{queue: h.queue, id: h.id})
	}
	now := s.p.now()
	for _, h := range due {
		st := s.stats[h.queue]
		st.held.Add(-1)
		st.released.Add(1)
		late := now - h.dueNs
		st.lateNsSum.Add(late)
		storeMax(&st.lateNsMax, late)
	}
}

// setSources replaces the sources; a queue that loses its source has
// every packet released at once.
func (s *scheduler) setSources(sources map[uint16]source) {
	for q := range s.dq.sources {
		if _, ok := sources[q]; !ok {
			s.releaseAll(q)
			delete(s.dq.sources, q)
		}
	}
	for q, src := range sources {
		s.dq.sources[q] = &dqSource{fault: src.fault, rng: src.rng}
		s.stats[q] = src.stats
	}
}

// releaseAll accepts every packet queue q holds in the kernel. Ids are
// handed out in order, so every packet queued so far is at most 2^30
// past the last one read.
func (s *scheduler) releaseAll(q uint16) {
	if err := s.p.q.acceptUpTo(q, s.lastID[q]+1<<30); err != nil {
		s.verdictFailed(err)
	}
	if n := s.dq.forget(q); n > 0 {
		s.stats[q].held.Add(-int64(n))
	}
}

func (s *scheduler) accept(pkt queued) {
	if err := s.p.q.accept(pkt); err != nil {
		s.verdictFailed(err)
	}
}

// verdictFailed reports a verdict that could not be sent (its packet
// stays queued until the fault stops): the first, then every thousandth.
func (s *scheduler) verdictFailed(err error) {
	if s.failed%1000 == 0 {
		s.p.logf("delay path in %s: verdict %d failed: %v", s.p.name, s.failed+1, err)
	}
	s.failed++
}

// rearm points the timer at the earliest due time, or nowhere.
func (p *delayPath) rearm(timer *time.Timer, dq *delayQueue) {
	next, ok := dq.nextDue()
	if !ok {
		timer.Stop()
		return
	}
	timer.Reset(time.Duration(next - p.now()))
}

// update gives the scheduler its sources (queue -> sender); packets
// admitted from now on follow them, held ones keep their due times.
func (p *delayPath) update(sources map[uint16]source) { p.updates <- sources }

// close releases every queued packet, unbinds the queues and waits for
// both goroutines. The caller removed the queue rules first.
func (p *delayPath) close() error {
	close(p.stop)
	p.sched.Wait()
	err := p.q.close()
	p.reader.Wait()
	return err
}

// pathStats counts one sender's packets over every receiver's delay path
// (so its fields are atomics: several schedulers write them).
type pathStats struct {
	delayed, immediate, released atomic.Uint64
	held, maxHeld                atomic.Int64
	lateNsSum, lateNsMax         atomic.Int64
}

func storeMax(a *atomic.Int64, v int64) {
	for old := a.Load(); v > old; old = a.Load() {
		if a.CompareAndSwap(old, v) {
			return
		}
	}
}

func (s *pathStats) snapshot() PacketStats {
	st := PacketStats{
		Delayed:   s.delayed.Load(),
		Immediate: s.immediate.Load(),
		MaxHeld:   int(s.maxHeld.Load()),
		MaxLateUs: s.lateNsMax.Load() / 1e3,
	}
	if n := s.released.Load(); n > 0 {
		st.MeanLateUs = s.lateNsSum.Load() / int64(n) / 1e3
	}
	return st
}
