package peer

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"chunklease/internal/apart"
	"chunklease/lease"
)

// Defaults for the limits in Config.
const (
	DefaultFrameLimit = 1 << 20 // a frame longer than this closes its connection
	DefaultQueueBytes = 2 << 20 // frames waiting for one peer; beyond it frames are dropped
	DefaultInboxSize  = 4096    // decoded messages waiting for the loop
	handshakeTimeout  = 5 * time.Second
	writeTimeout      = 5 * time.Second
	dialTimeout       = 2 * time.Second
	minBackoff        = 50 * time.Millisecond
	maxBackoff        = 2 * time.Second
	helloMagic        = "LNP5" // lease node peer protocol, version 5 (pings; the nonce; a sync answer's core; membership)
	maxHello          = 64 << 10
)

// Member is one node of the cluster: its id and its peer address.
type Member struct{ ID, Addr string }

// Config sets up a Transport.
type Config struct {
	Self    string
	Members []Member // the whole cluster, Self included, the same on every node
	Cert    tls.Certificate
	CAs     *x509.CertPool
	// Hello is the cluster's settings as this node sees them; a peer whose
	// Hello differs is refused, so members never run with different
	// member lists, acceptor sets or lease bounds.
	Hello      string
	FrameLimit int
	QueueBytes int
	InboxSize  int
	Seed       uint64 // reconnect jitter
	// PingInterval is how often each outgoing connection carries a ping
	// (liveness.go); 0 means DefaultPingInterval.
	PingInterval time.Duration
	// MaxHandshakes bounds the incoming connections not yet admitted
	// (TLS handshake and hello); one more closes the oldest of them
	// (handshakes.go). 0 means 64 + 4 per member.
	MaxHandshakes int
	// Booting reports whether this member's acceptor is in its boot wait;
	// its pongs say so (liveness.go). nil: never.
	Booting func() bool
	// Inboxes is how many inboxes incoming messages are sorted into (one
	// per loop of a member that runs several; 0 means 1), each holding
	// InboxSize. Route picks the inbox of a message, or every inbox
	// (lease.Route); it runs on the connection's reader. nil: inbox 0.
	Inboxes int
	Route   func(m *lease.Msg) (inbox int, every bool)
	Logf    func(format string, args ...any)

	// redialMin and redialMax bound the redial backoff (0: minBackoff and
	// maxBackoff); tests lengthen it to see what ends a wait early.
	redialMin, redialMax time.Duration
}

// backoffBounds are the redial backoff's first and longest wait.
func (c *Config) backoffBounds() (first, most time.Duration) {
	first, most = minBackoff, maxBackoff
	if c.redialMin > 0 {
		first = c.redialMin
	}
	if c.redialMax > 0 {
		most = c.redialMax
	}
	return first, most
}

func (c *Config) memberIDs() []string {
	ids := make([]string, len(c.Members))
	for i, m := range c.Members {
		ids[i] = m.ID
	}
	return ids
}

func (c *Config) addrOf(id string) string {
	for _, m := range c.Members {
		if m.ID == id {
			return m.Addr
		}
	}
	return ""
}

// Transport carries lease.Msg between the members of a cluster over
// mutually authenticated TLS: one long-lived outgoing connection to every
// other member (this node's frames to it) and one incoming connection
// from every other member (its frames to this node).
type Transport struct {
	cfg     Config
	inboxes []chan lease.Msg
	// inboxSpacers keep the inboxes' headers apart (internal/apart): each
	// is written at every message by its own loop's core.
	inboxSpacers []chan lease.Msg
	members      atomic.Pointer[memberSet] // replaced whole when a member is added (AddMember)
	addMu        sync.Mutex                // serializes AddMember

	epoch  time.Time // the liveness clock's zero (liveness.go)
	ctx    context.Context
	cancel context.CancelFunc
	ln     net.Listener
	wg     sync.WaitGroup

	inMu sync.Mutex
	in   map[string]*incoming // the open incoming connection of each member

	handshakes handshakeSet // incoming connections being admitted (handshakes.go)
	logMu      sync.Mutex
	logged     map[string]*rateLimited // refusals logged at most once a second, by kind

	refused   atomic.Int64 // connections refused (identity, settings, handshake, too many handshakes)
	malformed atomic.Int64 // frames from members that did not decode
}

// New makes a Transport; Start runs it.
func New(cfg Config) *Transport {
	if cfg.FrameLimit <= 0 {
		cfg.FrameLimit = DefaultFrameLimit
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = DefaultQueueBytes
	}
	if cfg.InboxSize <= 0 {
		cfg.InboxSize = DefaultInboxSize
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = DefaultPingInterval
	}
	if cfg.MaxHandshakes <= 0 {
		cfg.MaxHandshakes = 64 + 4*len(cfg.Members)
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Inboxes <= 0 {
		cfg.Inboxes = 1
	}
	t := &Transport{cfg: cfg, in: map[string]*incoming{},
		epoch: time.Now(), handshakes: handshakeSet{max: cfg.MaxHandshakes}, logged: map[string]*rateLimited{}}
	t.inboxes, t.inboxSpacers = apart.Chans[lease.Msg](cfg.Inboxes, cfg.InboxSize)
	set := &memberSet{links: map[string]*link{}, ids: cfg.memberIDs()}
	for i, m := range cfg.Members {
		if m.ID == cfg.Self {
			continue
		}
		l := newLink(m, cfg.QueueBytes, cfg.Seed+uint64(i))
		set.links[m.ID] = l
		set.order = append(set.order, l)
	}
	t.members.Store(set)
	return t
}

// memberSet is the members the transport knows: their ids (certificates
// must name one of them) and the outgoing link to each other member. It
// is never changed in place: AddMember stores a new one, so that the
// loop's Send and the accepting goroutines read it without a lock.
type memberSet struct {
	links map[string]*link // outgoing, by member id
	order []*link          // the same, in the order members were given or added
	ids   []string         // every member, this node included
}

// memberIDs is every member the transport knows now.
func (t *Transport) memberIDs() []string { return t.members.Load().ids }

// AddMember makes m a member of the cluster as the transport sees it (a
// member added at run time through the membership procedure, whose
// address the configuration carries): its certificate is accepted from
// now on, and this node dials it and keeps the connection open as for
// any member. A member already known keeps its address. Safe from any
// goroutine.
func (t *Transport) AddMember(m Member) {
	t.addMu.Lock()
	defer t.addMu.Unlock()
	old := t.members.Load()
	if slices.Contains(old.ids, m.ID) || m.ID == "" || m.Addr == "" {
		return
	}
	l := newLink(m, t.cfg.QueueBytes, t.cfg.Seed+uint64(len(old.ids)))
	set := &memberSet{links: maps.Clone(old.links), order: append(slices.Clone(old.order), l), ids: append(slices.Clone(old.ids), m.ID)}
	set.links[m.ID] = l
	t.members.Store(set)
	t.cfg.Logf("peer %s at %s: a member added at run time", m.ID, m.Addr)
	if t.ctx != nil && t.ctx.Err() == nil {
		t.wg.Add(1)
		go t.dialLoop(l)
	}
}

// Start listens on this member's address and dials every other member.
// It fails at once if the address cannot be listened on.
func (t *Transport) Start() error {
	addr := t.cfg.addrOf(t.cfg.Self)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("peer address %s: %w", addr, err)
	}
	t.ln = ln
	t.addMu.Lock()
	defer t.addMu.Unlock()
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.wg.Add(1)
	go t.acceptLoop()
	for _, l := range t.members.Load().order {
		t.wg.Add(1)
		go t.dialLoop(l)
	}
	return nil
}

// Addr is the address the transport listens on.
func (t *Transport) Addr() net.Addr { return t.ln.Addr() }

// Inbox delivers the messages other members sent that Config.Route
// sorts into inbox i (every message, with one inbox), From set to the
// sender's certified id and To to this node.
func (t *Transport) Inbox(i int) <-chan lease.Msg { return t.inboxes[i] }

// deliver puts a copy of *m into its inbox, or every inbox, waiting
// while one is full (which backs pressure up to the sender); false once
// the transport is closing. The caller may reuse m once it returns.
func (t *Transport) deliver(m *lease.Msg) bool {
	i, every := 0, false
	if t.cfg.Route != nil {
		i, every = t.cfg.Route(m)
	}
	if !every {
		return t.put(t.inboxes[i], m)
	}
	for _, in := range t.inboxes {
		if !t.put(in, m) {
			return false
		}
	}
	return true
}

// deliverLocal puts a message this node sent itself into its inbox, or
// every inbox, dropping it where an inbox is full: the sender is a loop
// that may be the one to drain that inbox.
func (t *Transport) deliverLocal(m lease.Msg) {
	i, every := 0, false
	if t.cfg.Route != nil {
		i, every = t.cfg.Route(&m)
	}
	for k, in := range t.inboxes {
		if !every && k != i {
			continue
		}
		select {
		case in <- m:
		default:
		}
	}
}

// put sends a copy of *m to in, waiting while in is full; false once
// the transport is closing.
func (t *Transport) put(in chan<- lease.Msg, m *lease.Msg) bool {
	select {
	case in <- *m:
		return true
	case <-t.ctx.Done():
		return false
	}
}

// Send queues m for m.To without blocking; Flush sends it. A message to a
// member that is not connected, or whose queue is full, is dropped and
// counted: the protocol treats it as lost. A message to this node itself
// (one core of a member of several to another: a change prepare, which
// every core answers, and the answers, which go to the lead) goes
// straight into the inboxes Route picks, without blocking: dropped when
// one is full (lost).
// m is encoded or copied at once and not kept: the caller may reuse it.
func (t *Transport) Send(m *lease.Msg) {
	if m.To == t.cfg.Self {
		t.deliverLocal(*m)
		return
	}
	if l := t.members.Load().links[m.To]; l != nil {
		l.push(m, t.cfg.FrameLimit)
	}
}

// Flush wakes the writers of every member with frames queued since the
// last Flush. The caller queues a burst with Send and flushes once, so
// the burst leaves in as few writes as possible.
func (t *Transport) Flush() {
	for _, l := range t.members.Load().order {
		l.flush()
	}
}

// Close stops listening and dialling, closes every connection and waits
// for the transport's goroutines, at most bound.
func (t *Transport) Close(bound time.Duration) error {
	if t.cancel == nil {
		return nil
	}
	t.addMu.Lock()
	t.cancel()
	t.addMu.Unlock()
	t.ln.Close()
	for _, l := range t.members.Load().order {
		l.closeConn()
	}
	t.inMu.Lock()
	for _, c := range t.in {
		c.conn.Close()
	}
	t.inMu.Unlock()
	done := make(chan struct{})
	go func() { t.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(bound):
		return errors.New("peer connections did not close in time")
	}
}
