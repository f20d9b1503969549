package maelstrom

import (
	"errors"
	"fmt"
	"io"
	"log"
	"slices"
	"sort"
	"strings"
	"time"
)

// Defaults; see the options to change them.
const (
	// DefaultDrainTimeout bounds how long Run keeps serving timers and RPC
	// deadlines after end of input before it returns.
	DefaultDrainTimeout = 3 * time.Second
	// DefaultStaleClientAge is the age past which a reply to a Maelstrom
	// client is dropped instead of sent: Maelstrom clients give up after
	// 5 s, and a reply to a closed client silences the node (spec §A.5).
	DefaultStaleClientAge = 4500 * time.Millisecond
	// flushTimeout bounds how long Run waits for stdout to take the last
	// lines after the drain.
	flushTimeout = 5 * time.Second
	// inboxSize is how many decoded messages may wait for the loop; the
	// reader blocks beyond it, which only back-pressures stdin.
	inboxSize = 256
	// DefaultMaxLineBytes is the longest input line a node reads unless
	// WithMaxLineBytes says otherwise: far above what Maelstrom's workloads
	// send, so long lines work as Maelstrom expects, yet a bound on what one
	// line can cost (see reader.go for what happens to a longer one).
	DefaultMaxLineBytes = 64 << 20
)

// Handler serves one request type. It runs on the loop. It answers with
// Node.Reply (now, or later from an RPC callback or timer, keeping req), or
// returns an error and the library answers with an error body: an *Error
// as given, any other error as CodeCrash (indefinite). A request without a
// msg_id is never answered; its handler's error is only logged.
type Handler func(req Message) error

// Option adjusts a Node created by New.
type Option func(*config)

type config struct {
	drainTimeout   time.Duration
	staleClientAge time.Duration
	maxLineBytes   int
	clock          Clock
}

// Clock is a node's sense of time. The default is the machine's monotonic
// clock; a test build may skew it (chunklease/internal/clock).
type Clock interface {
	// Now is the time elapsed on this clock since its origin; it never
	// goes backwards.
	Now() time.Duration
	// RealDelay is how long a timer must really wait for d of this clock
	// to pass.
	RealDelay(d time.Duration) time.Duration
	// Changed is closed when the clock's rate changes, so a waiting timer
	// re-arms; nil when it never changes.
	Changed() <-chan struct{}
}

// WithClock makes the node read its time (Now, timers, RPC deadlines, the
// age of client requests) from c instead of the machine's clock.
func WithClock(c Clock) Option {
	return func(cfg *config) { cfg.clock = c }
}

// machineClock is the default Clock: monotonic time since the node was made.
type machineClock struct{ start time.Time }

func (c machineClock) Now() time.Duration                    { return time.Since(c.start) }
func (machineClock) RealDelay(d time.Duration) time.Duration { return max(d, 0) }
func (machineClock) Changed() <-chan struct{}                { return nil }

// WithDrainTimeout sets how long Run keeps serving after end of input while
// the node is not idle (default DefaultDrainTimeout). Negative means 0.
func WithDrainTimeout(d time.Duration) Option {
	return func(c *config) { c.drainTimeout = max(d, 0) }
}

// WithMaxLineBytes sets the longest input line the node reads, in bytes
// without its newline (default DefaultMaxLineBytes; 0 or less means the
// default). A longer line is never held whole: it is answered with error
// 12 naming the limit when its src and msg_id come within the first n
// bytes, else logged and skipped, and the node reads on from the next
// line. Set it far above the node's largest legitimate message.
func WithMaxLineBytes(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxLineBytes = n
		}
	}
}

// WithStaleClientAge sets the age of a client request past which its reply
// is dropped with a log line (default DefaultStaleClientAge); 0 or less
// disables the rule, for graders that never close clients.
func WithStaleClientAge(d time.Duration) Option {
	return func(c *config) { c.staleClientAge = max(d, 0) }
}

// Node is one Maelstrom node: its identity, its handlers, and the event
// loop that runs them. Create it with New, register handlers and hooks,
// then call Run. Every other method must be called on the loop (from a
// handler, an RPC callback, a timer or the init hook); the Node has no
// locks because only the loop touches its state.
type Node struct {
	cfg    config
	clock  Clock
	log    *log.Logger
	reader *frameReader
	writer *lineWriter
	inbox  chan Message

	handlers map[string]Handler
	initHook func() error
	idle     func() bool
	running  bool

	id      string
	nodeIDs []string
	peers   map[string]bool // node_ids as a set

	nextMsgID int64 // the one counter every written line takes its msg_id from
	pending   map[int64]*pendingRPC
	// pendingPeak lets pending give its memory back after a burst.
	pendingPeak int
	timers      timerHeap
	timerSeq    uint64
	wake        *time.Timer

	stopProfile func() // ends the CPU profile (profile.go); nil without one
}

// New makes a node that reads messages from stdin, writes them to stdout
// and logs to stderr. Its clock (Now) starts here.
func New(stdin io.Reader, stdout, stderr io.Writer, opts ...Option) *Node {
	n := &Node{
		cfg:      config{drainTimeout: DefaultDrainTimeout, staleClientAge: DefaultStaleClientAge, maxLineBytes: DefaultMaxLineBytes},
		log:      log.New(stderr, "", log.Ltime|log.Lmicroseconds),
		inbox:    make(chan Message, inboxSize),
		handlers: make(map[string]Handler),
		pending:  make(map[int64]*pendingRPC),
	}
	for _, o := range opts {
		o(&n.cfg)
	}
	n.clock = n.cfg.clock
	if n.clock == nil {
		n.clock = machineClock{start: time.Now()}
	}
	n.reader = newFrameReader(stdin, n.Logf, n.cfg.maxLineBytes)
	n.writer = newLineWriter(stdout, n.Logf)
	n.idle = func() bool { return len(n.pending) == 0 }
	return n
}

// Handle registers the handler for request type typ. Call it before Run.
// It panics on an empty type, a nil handler, "init" (the library's), a
// second registration, or a call after Run started: all programmer errors.
func (n *Node) Handle(typ string, h Handler) {
	switch {
	case n.running:
		panic("maelstrom: Handle called after Run")
	case typ == "" || h == nil:
		panic("maelstrom: Handle needs a type and a handler")
	case typ == "init":
		panic(`maelstrom: "init" is handled by the library; use OnInit`)
	case n.handlers[typ] != nil:
		panic(fmt.Sprintf("maelstrom: second handler for %q", typ))
	}
	n.handlers[typ] = h
}

// OnInit registers a hook that runs on the loop when init arrives, after ID
// and NodeIDs are set and before init_ok is sent. If it returns an error
// the node stays uninitialised and init is answered with CodeMalformedRequest
// and the error's text. Call it before Run.
func (n *Node) OnInit(hook func() error) { n.initHook = hook }

// SetIdle replaces the test Run uses after end of input to decide that the
// node has nothing left to answer (default: no RPC is pending). Call it
// before Run; it runs on the loop.
func (n *Node) SetIdle(idle func() bool) { n.idle = idle }

// ID is this node's id from init ("" before init).
func (n *Node) ID() string { return n.id }

// NodeIDs is a copy of init's node_ids, in Maelstrom's order (nil before init).
func (n *Node) NodeIDs() []string { return slices.Clone(n.nodeIDs) }

// IsNode reports whether id is one of node_ids (false before init).
func (n *Node) IsNode(id string) bool { return n.peers[id] }

// Now is the monotonic time since New (or the WithClock clock's time).
// Read it once per event and pass it down, so one event sees one instant.
// Safe from any goroutine.
func (n *Node) Now() time.Duration { return n.clock.Now() }

// Logf writes one line to stderr. Safe from any goroutine.
func (n *Node) Logf(format string, args ...any) { n.log.Printf(format, args...) }

// Run serves until end of input, then drains (see the package doc) and
// returns. It returns nil unless stdout could not take the output. It must
// be called once.
func (n *Node) Run() error {
	if n.running {
		return errors.New("maelstrom: Run called twice")
	}
	n.running = true
	n.wake = time.NewTimer(0)
	n.wake.Stop()
	defer n.wake.Stop()
	go n.readInput()
	go n.writer.run()
	n.serve()
	n.drain()
	if n.stopProfile != nil {
		n.stopProfile()
	}
	return n.flush()
}

// readInput is the reader goroutine: decode, stamp, hand to the loop.
func (n *Node) readInput() {
	defer close(n.inbox)
	for {
		m, err := n.reader.next()
		if err != nil {
			return
		}
		m.receivedAt = n.Now()
		n.inbox <- m
	}
}

// serve is the loop until end of input.
func (n *Node) serve() {
	for {
		select {
		case m, ok := <-n.inbox:
			if !ok {
				return
			}
			n.dispatch(m)
		case <-n.armWake():
			n.inputBeforeTimers()
			n.fireDue()
		case <-n.clock.Changed():
			// the rate changed: the next turn re-arms the timer
		}
	}
}

// inputBeforeTimers dispatches the messages already waiting in the inbox
// (as many as wait on entry, so it never blocks) before due timers run.
// A process starved of CPU wakes with its timer due and the answers that
// arrived meanwhile waiting; select would pick either, and a round timeout
// that runs first gives up a round those answers complete.
func (n *Node) inputBeforeTimers() {
	for range len(n.inbox) {
		n.dispatch(<-n.inbox)
	}
}

// drain keeps timers and RPC deadlines running after end of input until the
// node is idle or the drain timeout passes.
func (n *Node) drain() {
	if n.idle() {
		return
	}
	n.Logf("end of input: %d RPCs pending; serving timers for at most %v", len(n.pending), n.cfg.drainTimeout)
	limit := time.NewTimer(n.cfg.drainTimeout)
	defer limit.Stop()
	for !n.idle() {
		select {
		case <-n.armWake():
			n.fireDue()
		case <-n.clock.Changed():
		case <-limit.C:
			n.Logf("drain timeout %v passed with %d RPCs pending; stopping", n.cfg.drainTimeout, len(n.pending))
			return
		}
	}
}

// flush hands the writer its last lines and waits for them to be written.
func (n *Node) flush() error {
	n.writer.close()
	limit := time.NewTimer(flushTimeout)
	defer limit.Stop()
	select {
	case <-n.writer.done:
		if n.writer.failed {
			return errors.New("maelstrom: writing stdout failed (see stderr)")
		}
		return nil
	case <-limit.C:
		return fmt.Errorf("maelstrom: stdout did not take the last output within %v", flushTimeout)
	}
}

// dispatch routes one message: replies to RPC callbacks, init to the
// library, requests to handlers once initialised.
func (n *Node) dispatch(m Message) {
	switch {
	case m.refusal != nil:
		n.refuseUnread(m)
	case m.HasInReplyTo:
		n.handleReply(m)
	case m.Type == "init":
		n.handleInit(m)
	case n.id == "":
		n.refuse(m, m.Dest, Errorf(CodeTemporarilyUnavailable,
			"node is not initialised: %s refused because no init message has been processed yet", typeName(m)))
	default:
		n.handleRequest(m)
	}
}

func (n *Node) handleRequest(m Message) {
	if m.Dest != n.id {
		n.Logf("message for %s arrived at %s; handling it as %s", m.Dest, n.id, n.id)
	}
	if m.Type == "" {
		n.refuse(m, n.id, Errorf(CodeMalformedRequest, `body has no "type" string; every request needs one`))
		return
	}
	h, ok := n.handlers[m.Type]
	if !ok {
		n.refuse(m, n.id, Errorf(CodeNotSupported, "unknown message type %q; this node serves: %s", m.Type, n.served()))
		return
	}
	m.reply = &replyState{}
	if err := h(m); err != nil {
		if m.reply.replied || !m.HasMsgID {
			n.Logf("handler for %s from %s failed after replying or without msg_id: %v", m.Type, m.Src, err)
			return
		}
		_ = n.sendError(n.id, m, asError(err))
	}
}

// refuse answers a request the library itself rejects, with src as the
// reply's source. A message without msg_id cannot be answered; it is logged.
func (n *Node) refuse(m Message, src string, e *Error) {
	m.reply = &replyState{}
	_ = n.sendError(src, m, e)
}

// refuseUnread answers a line the reader would not read (m.refusal says
// why), from this node's id, or before init from the address it was sent
// to, as the library's other refusals.
func (n *Node) refuseUnread(m Message) {
	src := n.id
	if src == "" {
		src = m.Dest
	}
	if src == "" {
		n.Logf("cannot answer %s: the node has no id yet and the line named no dest", describe(m))
		return
	}
	n.refuse(m, src, m.refusal)
}

// served lists the registered types for the not-supported text.
func (n *Node) served() string {
	types := make([]string, 0, len(n.handlers)+1)
	types = append(types, "init")
	for t := range n.handlers {
		types = append(types, t)
	}
	sort.Strings(types)
	return strings.Join(types, ", ")
}

func typeName(m Message) string {
	if m.Type == "" {
		return "a message without type"
	}
	return fmt.Sprintf("%q", m.Type)
}

// describe names a request in log lines: `"echo" msg_id 3 from c1`.
func describe(m Message) string {
	if !m.HasMsgID {
		return fmt.Sprintf("%s without msg_id from %s", typeName(m), m.Src)
	}
	return fmt.Sprintf("%s msg_id %d from %s", typeName(m), m.MsgID, m.Src)
}
