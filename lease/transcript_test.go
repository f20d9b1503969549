package lease

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of transcript tests in testdata/")

// TestTranscripts replays every testdata/*.txt scenario: commands with
// explicit time drive a small cluster whose messages sit in a FIFO until a
// command delivers, drops or duplicates them. Each command's output is
// compared with the expected block; -rewrite regenerates the blocks, to be
// read as a diff.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts found: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runTranscript(t, f) })
	}
}

// transcriptCase is one command and its expected output; text lines
// between cases (comments, blanks) are kept verbatim for rewriting.
type transcriptCase struct {
	preamble []string
	cmd      string
	line     int
	want     []string
}

func parseTranscript(t *testing.T, path string) ([]transcriptCase, []string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var cases []transcriptCase
	var pre []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == "" || strings.HasPrefix(l, "#") {
			pre = append(pre, l)
			continue
		}
		c := transcriptCase{preamble: pre, cmd: l, line: i + 1}
		pre = nil
		if i+1 >= len(lines) || lines[i+1] != "----" {
			t.Fatalf("%s:%d: command %q must be followed by ----", path, i+1, l)
		}
		i += 2
		for ; i < len(lines) && lines[i] != ""; i++ {
			c.want = append(c.want, lines[i])
		}
		i-- // the blank line (or EOF) is preamble of the next case
		cases = append(cases, c)
	}
	return cases, pre
}

func runTranscript(t *testing.T, path string) {
	cases, tail := parseTranscript(t, path)
	c := &cluster{nodes: map[string]*Node{}}
	var out strings.Builder
	failed := false
	for _, tc := range cases {
		got := c.run(t, tc.cmd)
		if len(got) == 0 {
			got = []string{"(no output)"}
		}
		for _, p := range tc.preamble {
			out.WriteString(p + "\n")
		}
		out.WriteString(tc.cmd + "\n----\n" + strings.Join(got, "\n") + "\n")
		if !*rewrite && !slices.Equal(got, tc.want) {
			failed = true
			t.Errorf("%s:%d: %s\n got:\n  %s\nwant:\n  %s", path, tc.line, tc.cmd,
				strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
		}
	}
	for _, p := range tail {
		out.WriteString(p + "\n")
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if failed {
		t.Log("if the new output is right, regenerate with: go test ./lease -run TestTranscripts -rewrite")
	}
}

// cluster is the transcript world: nodes, a FIFO of messages in flight,
// and the configuration new nodes are built with.
type cluster struct {
	cfg      Config
	nonces   uint64 // incarnations started: each gets its own nonce
	names    []string
	nodes    map[string]*Node
	inc      map[string]int64
	inflight []Msg
	// wallMs is the wall clock at time 0 (0: none); skewMs each node's
	// wall-clock offset.
	wallMs int64
	skewMs map[string]int64
}

func (c *cluster) run(t *testing.T, cmd string) []string {
	verb, args := parseArgs(t, cmd)
	switch verb {
	case "init":
		return c.init(t, args)
	case "request":
		return c.request(t, args)
	case "deliver", "drop", "dup":
		return c.network(t, verb, args)
	case "tick":
		n := c.node(t, args.str(t, "node"))
		return c.absorb(args.str(t, "node"), n.Tick(args.ms(t, "now")))
	case "restart":
		return c.restart(t, args)
	case "queue":
		return c.queue()
	case "state":
		return c.state(t, args)
	}
	t.Fatalf("unknown command %q", cmd)
	return nil
}

type argMap map[string]string

// parseArgs splits "verb a=1 b=2 word" into the verb and a map; a bare
// word w is stored as w="" and its position as _1, _2...
func parseArgs(t *testing.T, cmd string) (string, argMap) {
	fields := strings.Fields(cmd)
	args := argMap{}
	pos := 0
	for _, f := range fields[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			args[k] = v
			continue
		}
		pos++
		args[fmt.Sprintf("_%d", pos)] = f
	}
	return fields[0], args
}

func (a argMap) str(t *testing.T, k string) string {
	v, ok := a[k]
	if !ok {
		t.Fatalf("missing argument %s=", k)
	}
	return v
}

func (a argMap) int(t *testing.T, k string, def int64) int64 {
	v, ok := a[k]
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("argument %s=%s is not an integer", k, v)
	}
	return n
}

func (a argMap) ms(t *testing.T, k string) time.Duration {
	return time.Duration(a.int(t, k, 0)) * time.Millisecond
}

func (c *cluster) init(t *testing.T, a argMap) []string {
	c.names = strings.Split(a.str(t, "nodes"), ",")
	acc := c.names
	if v, ok := a["acceptors"]; ok {
		acc = strings.Split(v, ",")
	}
	c.cfg = Config{
		Acceptors: acc, Nodes: c.names, DefaultLeaseMs: a.int(t, "lease-ms", 1000), MaxLeaseMs: a.int(t, "max-ms", 1000),
		BootWaitMs: a.int(t, "boot-wait-ms", 0), DriftMarginMs: a.int(t, "margin-ms", 0),
		DriftPPM: a.int(t, "drift-ppm", 0), QuorumTimeoutMs: a.int(t, "quorum-timeout-ms", 2000),
		RoundTimeoutMs: a.int(t, "round-timeout-ms", 500),
		BackoffMinMs:   a.int(t, "backoff-min-ms", 10), BackoffMaxMs: a.int(t, "backoff-max-ms", 10),
		Membership: a["membership"] == "on",
	}
	if w, ok := a["weaken"]; ok {
		var err error
		if c.cfg, err = WithWeakening(c.cfg, w); err != nil {
			t.Fatal(err)
		}
	}
	c.inc = map[string]int64{}
	c.nodes = map[string]*Node{}
	c.inflight = nil
	c.wallMs, c.skewMs = 0, map[string]int64{}
	if _, ok := a["wall-ms"]; ok {
		// wall-ms=N: the wall clock reads N ms after CounterEpochMs at
		// time 0, so counters stay readable; skew=n1:30000,n2:-5 offsets
		// nodes' wall clocks.
		c.wallMs = CounterEpochMs + a.int(t, "wall-ms", 0)
	}
	for _, kv := range strings.Split(a["skew"], ",") {
		if id, v, ok := strings.Cut(kv, ":"); ok {
			c.skewMs[id], _ = strconv.ParseInt(v, 10, 64)
		}
	}
	// The nodes of a new cluster start without a boot wait (there is
	// nothing to forget); only a restart command makes a node wait and
	// recover.
	for _, id := range c.names {
		c.startNode(t, id, 0, 0)
	}
	return []string{fmt.Sprintf("cluster %v acceptors %v quorum %d", c.names, acc, majority(len(acc)))}
}

func (c *cluster) startNode(t *testing.T, id string, now time.Duration, bootWaitMs int64) {
	c.inc[id]++
	cfg := c.cfg
	cfg.ID, cfg.Incarnation, cfg.Rand = id, c.inc[id], rand.New(rand.NewPCG(1, uint64(c.inc[id])))
	cfg.BootWaitMs = bootWaitMs
	c.nonces++
	cfg.Nonce = c.nonces
	if c.wallMs > 0 {
		cfg.WallMs = c.wallMs + int64(now/time.Millisecond) + c.skewMs[id]
	}
	n, err := NewNode(cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	c.nodes[id] = n
}

func (c *cluster) node(t *testing.T, id string) *Node {
	n, ok := c.nodes[id]
	if !ok {
		t.Fatalf("no node %s", id)
	}
	return n
}

var opNames = map[string]Op{"grant": OpGrant, "renew": OpRenew, "check": OpCheck, "release": OpRelease,
	"master-start": OpMasterStart, "master-stop": OpMasterStop, "master-status": OpMasterStatus,
	"member-add": OpMemberAdd, "member-remove": OpMemberRemove, "member-replace": OpMemberReplace, "member-list": OpMemberList}

// request: request node=n1 now=0 id=1 grant chunk=c1 server=s1 [lease-ms=500]
func (c *cluster) request(t *testing.T, a argMap) []string {
	op, ok := opNames[a.str(t, "_1")]
	if !ok {
		t.Fatalf("unknown op %q", a["_1"])
	}
	req := Request{ID: uint64(a.int(t, "id", 0)), Op: op, Chunk: a["chunk"], Server: a["server"],
		LeaseMs: a.int(t, "lease-ms", 0), Token: a.int(t, "token", 0),
		Member: a["member"], Replacement: a["replacement"], Force: a["force"] == "true"}
	id := a.str(t, "node")
	return c.absorb(id, c.node(t, id).Request(a.ms(t, "now"), req))
}

// absorb queues a node's outgoing messages and renders its output.
func (c *cluster) absorb(id string, out *Output) []string {
	var lines []string
	for _, m := range out.Msgs {
		c.inflight = append(c.inflight, m)
		lines = append(lines, "send "+formatMsg(m))
	}
	for _, r := range out.Replies {
		lines = append(lines, fmt.Sprintf("%s reply id=%d %s", id, r.ID, formatReply(r)))
	}
	for _, l := range out.Logs {
		lines = append(lines, fmt.Sprintf("%s log: %s", id, l))
	}
	if out.Wake != Never {
		lines = append(lines, fmt.Sprintf("%s wake=%dms", id, out.Wake/time.Millisecond))
	}
	return lines
}

func formatReply(r Reply) string {
	if r.Err != nil {
		return fmt.Sprintf("error %d %q", r.Err.Code, r.Err.Text)
	}
	body, _ := json.Marshal(r.Body)
	return r.Type + " " + string(body)
}

func formatMsg(m Msg) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s->%s %s", m.From, m.To, m.Type)
	if m.Chunk != "" {
		fmt.Fprintf(&b, " %s", m.Chunk)
	}
	if !m.Ballot.IsZero() {
		fmt.Fprintf(&b, " b=%s", m.Ballot)
	}
	if m.Server != "" {
		fmt.Fprintf(&b, " server=%s", m.Server)
	}
	if m.LeaseMs != 0 {
		fmt.Fprintf(&b, " lease=%dms", m.LeaseMs)
	}
	if m.Fast {
		b.WriteString(" fast")
	}
	if m.Token != 0 {
		fmt.Fprintf(&b, " token=%d", m.Token)
	}
	if !m.Type.usesBallot() && !m.Type.unnumbered() && (m.Type != MsgBooting || m.Ballot.IsZero()) {
		fmt.Fprintf(&b, " req=%d", m.ReqID)
	}
	formatMembership(&b, m)
	switch m.Type {
	case MsgBooting:
		fmt.Fprintf(&b, " booting=%dms", m.BootingMs)
	case MsgSyncResp:
		fmt.Fprintf(&b, " counter=%d recovering=%v", m.Counter, m.Recovering)
	case MsgPrepareResp, MsgProposeResp, MsgReleaseResp:
		fmt.Fprintf(&b, " ok=%v", m.OK)
		fallthrough
	case MsgReadResp:
		fmt.Fprintf(&b, " promised=%s", m.Promised)
		if m.Type != MsgReleaseResp {
			fmt.Fprintf(&b, " lease=%s", formatRecord(m.Lease))
		}
	}
	return b.String()
}

// formatMembership renders what a message says about configurations.
func formatMembership(b *strings.Builder, m Msg) {
	if m.Epoch != 0 || m.Type.usesBallot() && m.Type.chunkless() {
		fmt.Fprintf(b, " epoch=%d", m.Epoch)
	}
	if m.Active {
		b.WriteString(" active")
	}
	if m.Conf != nil {
		fmt.Fprintf(b, " config=%s", formatConf(*m.Conf))
	}
	if m.Value != nil {
		fmt.Fprintf(b, " value=%s", formatConf(*m.Value))
	}
	if !m.Accepted.IsZero() {
		fmt.Fprintf(b, " accepted=%s", m.Accepted)
	}
	switch m.Type {
	case MsgChangePrepareResp, MsgChangeProposeResp:
		fmt.Fprintf(b, " ok=%v promised=%s", m.OK, m.Promised)
		if m.OK && m.Type == MsgChangePrepareResp {
			fmt.Fprintf(b, " high=%d", m.Counter)
		}
	}
	if m.WaitMs != 0 {
		fmt.Fprintf(b, " wait=%dms", m.WaitMs)
	}
	if m.Learner {
		b.WriteString(" learner")
	}
}

func formatConf(c Membership) string {
	s := fmt.Sprintf("%d:%s", c.Epoch, strings.Join(c.Members, ","))
	if c.Floor != 0 {
		s += fmt.Sprintf("/floor=%d", c.Floor)
	}
	return s
}

func formatRecord(r *Record) string {
	if r == nil {
		return "none"
	}
	state := "live"
	if r.Expired {
		state = "expired"
	}
	return fmt.Sprintf("%s@%d/%dms/%s", r.Server, r.Token, r.RemainingMs, state)
}

// matches filters in-flight messages by from=, to=, type=.
func matches(a argMap, m Msg) bool {
	return (a["from"] == "" || a["from"] == m.From) && (a["to"] == "" || a["to"] == m.To) &&
		(a["type"] == "" || a["type"] == string(m.Type))
}

// network delivers, drops or duplicates the in-flight messages that match
// (all of them by default, at most count=N), in FIFO order. Messages sent
// while delivering join the end of the queue and wait for a later command.
func (c *cluster) network(t *testing.T, verb string, a argMap) []string {
	limit := int(a.int(t, "count", 1<<30))
	now := a.ms(t, "now")
	var picked, kept []Msg
	for _, m := range c.inflight {
		if len(picked) < limit && matches(a, m) {
			picked = append(picked, m)
		} else {
			kept = append(kept, m)
		}
	}
	if len(picked) == 0 {
		// Not fatal: the output shows it, so -rewrite still writes the
		// whole file and the script can be mended by reading it.
		return []string{fmt.Sprintf("%s: no in-flight message matches", verb)}
	}
	var lines []string
	switch verb {
	case "drop":
		c.inflight = kept
		for _, m := range picked {
			lines = append(lines, "dropped "+formatMsg(m))
		}
	case "dup":
		c.inflight = append(c.inflight, picked...)
		lines = append(lines, fmt.Sprintf("duplicated %d messages", len(picked)))
	case "deliver":
		c.inflight = kept
		for _, m := range picked {
			lines = append(lines, "recv "+formatMsg(m))
			lines = append(lines, c.absorb(m.To, c.node(t, m.To).Receive(now, m))...)
		}
	}
	return lines
}

func (c *cluster) restart(t *testing.T, a argMap) []string {
	id := a.str(t, "node")
	if _, ok := a["skew-ms"]; ok {
		c.skewMs[id] = a.int(t, "skew-ms", 0)
	}
	c.startNode(t, id, a.ms(t, "now"), c.cfg.BootWaitMs)
	n := c.nodes[id]
	lines := []string{fmt.Sprintf("%s restarted incarnation=%d silent until %dms", id, c.inc[id], n.bootUntil/time.Millisecond)}
	return append(lines, c.absorb(id, n.Tick(a.ms(t, "now")))...)
}

func (c *cluster) queue() []string {
	var lines []string
	for _, m := range c.inflight {
		lines = append(lines, formatMsg(m))
	}
	return lines
}

func (c *cluster) state(t *testing.T, a argMap) []string {
	n := c.node(t, a.str(t, "node"))
	acc, ok := n.chunks.get(a.str(t, "chunk"))
	if !ok {
		return []string{"no state"}
	}
	last := fmt.Sprintf("promised=%s last=%s", acc.promise(), n.serverName(acc.server()))
	if acc.lease == nil {
		return []string{last + " protecting nothing"}
	}
	p, tot := acc.lease, acc.lease.total()
	return []string{fmt.Sprintf("%s own=%d/%dms/released=%v prev=%d/%dms/released=%v end=%dms live-until=%dms", last,
		p.own.token, p.own.end/time.Millisecond, p.own.released, p.prev.token, p.prev.end/time.Millisecond,
		p.prev.released, tot.end/time.Millisecond, tot.live/time.Millisecond)}
}
