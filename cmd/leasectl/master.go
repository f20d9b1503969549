package main

import (
	"fmt"
	"strconv"

	"chunklease/client"
)

// cmdMaster is `master start|stop|status [-node N]`: a node's own master
// campaign and status, asked of that node (no failover: the answer is
// about the node). Without -node, one endpoint is that node; status asks
// every endpoint, a line each.
func cmdMaster(inv *invocation, args []string) int {
	fs := newFlagSet("master", inv.g)
	node := fs.String("node", "", "")
	pos, code := inv.parse("master", fs, args, 1)
	if code >= 0 {
		return code
	}
	action := pos[0]
	if action != "start" && action != "stop" && action != "status" {
		return usageError(inv.stderr, "master", fmt.Sprintf("unknown action %q; use start, stop or status", action))
	}
	c, code := inv.connect()
	if c == nil {
		return code
	}
	defer c.Close()
	nodes, err := pickNodes(c.Endpoints(), *node, action == "status")
	if err != nil {
		return usageError(inv.stderr, "master", err.Error())
	}
	worst := exitOK
	for _, n := range nodes {
		worst = max(worst, masterOne(inv, c, action, n))
	}
	return worst
}

// pickNodes resolves -node: an endpoint's number from 1, or a client
// URL; empty means the only endpoint, or every endpoint when all is true.
func pickNodes(endpoints []string, node string, all bool) ([]string, error) {
	switch {
	case node == "" && (len(endpoints) == 1 || all):
		return endpoints, nil
	case node == "":
		return nil, fmt.Errorf("which node? give -node N (1..%d, in the order of the endpoints) or -node URL", len(endpoints))
	}
	if i, err := strconv.Atoi(node); err == nil {
		if i < 1 || i > len(endpoints) {
			return nil, fmt.Errorf("-node %d: there are %d endpoints; give 1..%d or a URL", i, len(endpoints), len(endpoints))
		}
		return []string{endpoints[i-1]}, nil
	}
	return []string{node}, nil
}

// masterOne runs one action at one node and prints its line.
func masterOne(inv *invocation, c *client.Client, action, node string) int {
	ctx, cancel := inv.callCtx()
	defer cancel()
	var err error
	switch action {
	case "start":
		if err = c.MasterStart(ctx, node); err == nil {
			inv.out.line("master started node=%s", node)
		}
	case "stop":
		if err = c.MasterStop(ctx, node); err == nil {
			inv.out.line("master stopped node=%s", node)
		}
	case "status":
		var st client.MasterStatus
		if st, err = c.MasterStatus(ctx, node); err == nil {
			line := fmt.Sprintf("master status node=%s is_master=%t master=%s remaining_ms=%d", node, st.IsMaster, orNone(st.Master), st.RemainingMs)
			if st.IsMaster {
				line += fmt.Sprintf(" token=%d", st.Token) // the master lease's fencing token
			}
			inv.out.line("%s", line)
		}
	}
	if err != nil {
		return fail(inv.stderr, err)
	}
	return exitOK
}
