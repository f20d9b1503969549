package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// setup registers every node before any starts (so no node can send to a
// peer the network does not know yet), starts the programs, sends each
// its init from c0..c(n-1) in parallel and waits for every init_ok. Then
// it opens the idle per-node setup clients c(n)..c(2n-1), as Maelstrom
// does, so worker clients start at c(2n).
func (r *runner) setup(ctx context.Context) error {
	for _, id := range r.o.Nodes {
		r.net.Register(id)
	}
	initClients := make([]*client, len(r.o.Nodes))
	for i := range initClients {
		initClients[i] = r.newClient()
	}
	cfg := nodeConfig{net: r.net, launch: r.o.Launch, logDir: filepath.Join(r.dir, "node-logs"), console: r.console,
		mirror: r.o.LogStderr, strict: r.o.Strict, fail: r.failure.set, lateReply: r.lateReply}
	for _, id := range r.o.Nodes {
		n, err := startNode(id, cfg, r.nodeEnv(false))
		if err != nil {
			return err
		}
		r.nodes = append(r.nodes, n)
	}
	if err := r.initAll(ctx, initClients); err != nil {
		return err
	}
	for _, c := range initClients {
		r.closeClient(c)
	}
	for range r.o.Nodes {
		r.newClient()
	}
	return nil
}

// initAll sends every init at once and waits for all answers, a node
// failure or the user's interrupt.
func (r *runner) initAll(ctx context.Context, clients []*client) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(clients))
	for i, id := range r.o.Nodes {
		go func() { errs <- r.initNode(ctx, clients[i], id) }()
	}
	for range clients {
		select {
		case err := <-errs:
			if err != nil {
				return err
			}
		case <-r.failure.ch:
			return r.failure.err
		case <-ctx.Done():
			return errInterrupted
		}
	}
	return nil
}

// nodeEnv is what a node program gets on top of the harness's own
// environment. A workload with leases (L = its longest lease) sets the
// nodes' lease bounds when the kill nemesis is on, and in every run when
// its leases have the nodes' own length (workloads.NodeLeased: the master
// workload, whose requests carry none, so L is that length). Every
// program then gets LEASE_MAX_MS=L, and LEASE_MS=L unless the environment
// already names a default lease no longer than that (a node refuses a
// default above its maximum); a restarted program (only the kill
// nemesis restarts) also gets LEASE_BOOT_WAIT_MS=L, so that it stays
// silent until every lease it may have accepted and forgotten has ended
// (the node stretches it by its own drift bound), or 0 with
// --kill-without-boot-wait (the negative control). Any other run passes
// nothing, as Maelstrom does.
func (r *runner) nodeEnv(restart bool) []string {
	if r.leaseMs <= 0 || !(r.o.Faults.Kill || r.nodeLeases) {
		return nil
	}
	l := strconv.FormatInt(r.leaseMs, 10)
	env := []string{"LEASE_MAX_MS=" + l}
	if v, err := strconv.ParseInt(os.Getenv("LEASE_MS"), 10, 64); err != nil || v < 1 || v > r.leaseMs {
		env = append(env, "LEASE_MS="+l)
	}
	if restart {
		wait := l
		if r.o.KillWithoutBootWait {
			wait = "0"
		}
		env = append(env, "LEASE_BOOT_WAIT_MS="+wait)
	}
	return env
}

// initRequest is Maelstrom's init body.
type initRequest struct {
	Type    string   `json:"type"`
	NodeID  string   `json:"node_id"`
	NodeIDs []string `json:"node_ids"`
}

// initNode sends init to node id and checks the answer is init_ok.
func (r *runner) initNode(ctx context.Context, c *client, id string) error {
	req, _ := json.Marshal(initRequest{Type: "init", NodeID: id, NodeIDs: r.o.Nodes}) // strings always marshal
	reply, err := c.call(ctx, r.net, id, req, r.o.InitTimeout)
	var discarded *timeoutError
	switch {
	case errors.As(err, &discarded) && discarded.strays > 0:
		return fmt.Errorf("init failed: expected node %s to respond to an init message within %v with in_reply_to %d, but its %d message(s) to %s answer no request, the first: %s",
			id, r.o.InitTimeout, c.lastMsgID, discarded.strays, c.name, truncate(string(discarded.first), 300))
	case errors.Is(err, errTimeout):
		return fmt.Errorf("init failed: expected node %s to respond to an init message within %v, but it did not respond (does it read stdin line by line, and write each reply as one line to stdout, flushed?)", id, r.o.InitTimeout)
	case err != nil:
		return fmt.Errorf("init of node %s: %w", id, err)
	}
	var b struct {
		Type string          `json:"type"`
		Code json.RawMessage `json:"code"`
		Text json.RawMessage `json:"text"`
	}
	_ = json.Unmarshal(reply, &b) // the network only passes objects
	switch b.Type {
	case "init_ok":
		return nil
	case "error":
		return fmt.Errorf("init failed: node %s answered init with an error (code %s, text %s); it must answer init_ok", id, b.Code, b.Text)
	}
	return fmt.Errorf("init failed: node %s answered init with a %q message; it must answer {\"type\":\"init_ok\",\"in_reply_to\":1}: %s", id, b.Type, reply)
}
