package realnet

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/harness/nodeproc"
)

// The probes: /readyz answers 200 once the boot wait is over and a
// majority of acceptors is reachable (the start: the cluster is up);
// /healthz once the process serves HTTP (a restart: the node is up, and
// stays silent as an acceptor for its boot wait).
const (
	readyPath  = "/readyz"
	healthPath = "/healthz"
)

// probeEvery is how often a node is probed while the harness waits for it.
const probeEvery = 50 * time.Millisecond

// awaitAll probes every node of ids at path in parallel until each
// answers 200, a node fails (its program exited), the user interrupts,
// or a node's time (Config.ReadyTimeout) runs out: that node is named
// with what it last answered and its log's last lines.
func (n *Network) awaitAll(ctx context.Context, ids []string, path string) error {
	err := n.fail.AwaitEach(ctx, len(ids), func(ctx context.Context, i int) error {
		return n.await(ctx, ids[i], path)
	})
	if ctx.Err() != nil {
		return harness.ErrInterrupted
	}
	return err
}

// await probes node id at path until it answers 200 or its time runs out.
func (n *Network) await(ctx context.Context, id, path string) error {
	deadline := time.Now().Add(n.cfg.ReadyTimeout)
	ticker := time.NewTicker(probeEvery)
	defer ticker.Stop()
	last := "nothing yet"
	for {
		ok, answer := n.probeOnce(ctx, id, path)
		if ok {
			return nil
		}
		last = answer
		if time.Now().After(deadline) {
			return n.notReady(id, path, last)
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// probeOnce sends one GET and says whether it answered 200, and if not,
// what it answered.
func (n *Network) probeOnce(ctx context.Context, id, path string) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.clientURL(id)+path, nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := n.probe.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
	if resp.StatusCode == http.StatusOK {
		return true, ""
	}
	return false, fmt.Sprintf("HTTP %d %s", resp.StatusCode, strings.TrimSpace(string(body)))
}

// notReady is the run's failure for a node that never became ready.
func (n *Network) notReady(id, path, last string) error {
	var tail []string
	logPath := ""
	if nd := n.node(id); nd != nil {
		logPath = nd.LogPath()
		if inc := nd.Current(); inc != nil {
			tail = inc.StderrTail()
		}
	}
	longer := strconv.FormatFloat(3*n.cfg.ReadyTimeout.Seconds(), 'f', -1, 64)
	return fmt.Errorf("node %s did not become ready: GET %s%s did not answer 200 within %v (--init-timeout; its last answer: %s); a node must serve HTTP on its client address and, at the start, see a majority of its peers. "+
		"A node that starts slowly (a loaded machine) needs more time: rerun with --init-timeout %s.\n  last stderr lines:%s\n  full stderr log: %s",
		id, n.clientURL(id), path, n.cfg.ReadyTimeout, last, longer, nodeproc.IndentLines(tail), logPath)
}
