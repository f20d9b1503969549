package main

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"time"

	"chunklease/internal/clock"
	"chunklease/internal/nodeconfig"
	"chunklease/internal/shell"
	"chunklease/lease"
	"chunklease/maelstrom"
)

// shellNode is the thin shell around the pure lease core: it reads the clock
// once per event, feeds the core, and turns the core's output into
// Maelstrom messages, replies and one wake-up timer (the shared part is
// internal/shell's Driver; this file is the Maelstrom edges). Everything
// runs on the protocol library's single event loop, so nothing here is
// locked, and the core is one lease.Node: a Maelstrom node does not split
// its chunks among several cores as lease-node serve -loops does
// (lease/doc.go "Cores sharing one member"); its stdin and stdout are one
// stream either way, and a Maelstrom run's load is far below one core.
type shellNode struct {
	cfg    nodeconfig.Node
	getenv func(string) string // the environment (LEASE_WEAKEN in a -tags weaken build)
	clock  *clock.Clock        // the process's clocks (skewed only in a clockfault build)
	node   *maelstrom.Node
	drv    *shell.Driver[maelstrom.Message] // nil until init
	// answering is the peer request being handled, whose answer goes out
	// as its reply; nil outside onPeer.
	answering *maelstrom.Message
}

// maxLineBytes is the node's input line limit. The largest message it
// takes or sends is a peer message naming a chunk and a server at their
// limits (4096 bytes each, up to six times that when every byte is sent
// \u-escaped), about 50 KiB; a 1 MiB line is far beyond any of them, and a
// longer one is refused with error 12 without being held (maelstrom.
// WithMaxLineBytes).
const maxLineBytes = 1 << 20

func newShellNode(cfg nodeconfig.Node, clk *clock.Clock, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) *shellNode {
	s := &shellNode{cfg: cfg, clock: clk, getenv: getenv}
	s.node = maelstrom.New(stdin, stdout, stderr, maelstrom.WithClock(clk), maelstrom.WithMaxLineBytes(maxLineBytes))
	s.node.OnInit(s.init)
	// At end of input the node drains until every client request it took
	// is answered (at most the quorum timeout), then exits.
	s.node.SetIdle(func() bool { return s.drv == nil || s.drv.Pending() == 0 })
	for typ := range lease.Ops {
		s.node.Handle(typ, s.onClient)
	}
	for _, typ := range []lease.MsgType{lease.MsgPrepare, lease.MsgPropose, lease.MsgRead, lease.MsgRelease, lease.MsgSync, lease.MsgCancel,
		lease.MsgChangePrepare, lease.MsgChangePropose, lease.MsgConfig} {
		s.node.Handle(string(typ), s.onPeer)
	}
	s.node.Handle("echo", s.onEcho)
	return s
}

// init builds the core once node_ids are known; a misconfigured acceptor
// list fails init, which stops a Maelstrom test with this text.
func (s *shellNode) init() error {
	acc, err := s.cfg.AcceptorList(s.node.NodeIDs(), s.node.ID())
	if err != nil {
		return err
	}
	wall := s.clock.Wall()
	inc := wall.UnixMicro() // grows across restarts; below 2^53 until the year 2255
	seed := s.cfg.Seed
	if seed == 0 {
		seed = inc
	}
	cfg, note, err := nodeconfig.Weaken(lease.Config{
		ID: s.node.ID(), Acceptors: acc, Nodes: s.node.NodeIDs(), Incarnation: inc, Nonce: shell.NewNonce(), WallMs: wall.UnixMilli(),
		DefaultLeaseMs: s.cfg.LeaseMs, MaxLeaseMs: s.cfg.MaxLeaseMs, BootWaitMs: s.cfg.BootWaitMs,
		DriftMarginMs: s.cfg.DriftMarginMs, DriftPPM: s.cfg.DriftPPM, QuorumTimeoutMs: s.cfg.QuorumTimeoutMs, MaxInFlight: int(s.cfg.MaxInFlight),
		Rand: rand.New(rand.NewPCG(uint64(seed), uint64(inc))), Membership: s.cfg.Membership,
	}, s.getenv)
	if err != nil {
		return err
	}
	if note != "" {
		s.node.Logf("%s", note)
	}
	core, err := lease.NewNode(cfg, s.node.Now())
	if err != nil {
		return err
	}
	s.drv = shell.New[maelstrom.Message](core, s)
	// A restarted node starts recovering its ballot floor at once, but
	// from a timer: the library writes init_ok when this returns, and
	// init_ok must be the node's first message (msg_id 0).
	s.drv.Schedule(s.node.Now())
	s.node.Logf("lease-node %s (incarnation %d): acceptors %v, lease %d ms (max %d), boot wait %d ms, drift %d ppm, margin %d ms, quorum timeout %d ms, %d requests in flight, seed %d, membership %s",
		s.node.ID(), inc, acc, s.cfg.LeaseMs, s.cfg.MaxLeaseMs, s.cfg.BootWaitMs, s.cfg.DriftPPM, s.cfg.DriftMarginMs, s.cfg.QuorumTimeoutMs, s.cfg.MaxInFlight, seed,
		map[bool]string{true: "on", false: "off"}[s.cfg.Membership])
	return nil
}

// onClient serves lease_grant, lease_renew, lease_check and lease_release.
func (s *shellNode) onClient(req maelstrom.Message) error {
	r, err := lease.DecodeRequest(req.Type, req.Body)
	if err != nil {
		return maelstrom.Errorf(maelstrom.Code(err.Code), "%s", err.Text)
	}
	// The reply needs only the envelope; the body (up to a line) is not
	// kept while the request is in flight.
	req.Body = nil
	s.drv.Request(s.node.Now(), r, req)
	return nil
}

// onPeer serves an acceptor request from another node; the core answers it
// within the same call, and that answer is sent as the reply. Only nodes
// of the cluster may send one: a client's prepare or propose would reach
// the acceptor as if a proposer had sent it, planting a lease or a
// promise no client asked for.
func (s *shellNode) onPeer(req maelstrom.Message) error {
	if !s.node.IsNode(req.Src) {
		return maelstrom.Errorf(maelstrom.CodeNotSupported,
			"%s is a message between lease nodes; only the nodes in node_ids %v may send it, not %s (clients use lease_grant, lease_renew, lease_check, lease_release)",
			req.Type, s.node.NodeIDs(), req.Src)
	}
	m, err := lease.DecodeMsg(req.Type, req.Src, req.Dest, req.Body)
	if err != nil {
		return maelstrom.Errorf(maelstrom.CodeMalformedRequest, "%v", err)
	}
	s.answering = &req
	s.drv.Receive(s.node.Now(), m)
	s.answering = nil
	return nil
}

// onPeerReply feeds an acceptor's answer to one of this node's requests
// back to the core. A timeout needs nothing: the core has its own
// deadlines, and the library has already forgotten the request.
func (s *shellNode) onPeerReply(reply maelstrom.Message, err error) {
	if err != nil {
		return
	}
	m, derr := lease.DecodeMsg(reply.Type, reply.Src, reply.Dest, reply.Body)
	if derr != nil {
		s.node.Logf("ignoring %s from %s: %v", reply.Type, reply.Src, derr)
		return
	}
	s.drv.Receive(s.node.Now(), m)
}

// Now, After, Send, Reply and Log are the Maelstrom edges of the Driver.
func (s *shellNode) Now() time.Duration { return s.node.Now() }

// Log writes one of the core's lines for the operator to stderr.
func (s *shellNode) Log(line string) { s.node.Logf("%s", line) }

func (s *shellNode) After(d time.Duration, f func()) func() { return s.node.After(d, f) }

// Send sends a peer message: the answer to the peer request being handled
// as its reply, anything else as an RPC.
func (s *shellNode) Send(m lease.Msg) {
	var err error
	// A booting acceptor's answer goes back as the reply too.
	if peer := s.answering; peer != nil && m.To == peer.Src && (m.Type == lease.MsgType(peer.Type)+"_ok" || m.Type == lease.MsgBooting) {
		err = s.node.Reply(*peer, string(m.Type), m.Body())
	} else {
		timeout := time.Duration(s.cfg.QuorumTimeoutMs) * time.Millisecond
		err = s.node.RPC(m.To, string(m.Type), m.Body(), timeout, s.onPeerReply)
	}
	if err != nil {
		s.node.Logf("cannot send %s to %s: %v", m.Type, m.To, err)
	}
}

// Reply answers the client request the core decided; the one place where
// core errors become Maelstrom error codes.
func (s *shellNode) Reply(req maelstrom.Message, r lease.Reply) {
	var err error
	if r.Err != nil {
		err = s.node.ReplyError(req, maelstrom.Code(r.Err.Code), r.Err.Text)
	} else {
		err = s.node.Reply(req, r.Type, r.Body)
	}
	if err != nil {
		s.node.Logf("cannot answer %s from %s: %v", req.Type, req.Src, err)
	}
}

// onEcho serves Maelstrom's echo workload, so the binary can be checked
// with it; the reply carries only echo, as Maelstrom's schema demands.
func (s *shellNode) onEcho(req maelstrom.Message) error {
	var body struct {
		Echo json.RawMessage `json:"echo"`
	}
	if err := req.DecodeBody(&body); err != nil {
		return err
	}
	return s.node.Reply(req, "echo_ok", body)
}
