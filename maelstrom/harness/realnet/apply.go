package realnet

import (
	"context"
	"fmt"
	"time"

	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/harness/nodeproc"
	"chunklease/maelstrom/nemesis"
	"chunklease/maelstrom/netns"
)

// Apply applies one fault by the kernel: a partition is the grudge as
// packet filter drops (healed by flushing them all), kill and pause are
// SIGKILL and SIGSTOP to the chosen nodes' process groups, resume is
// SIGCONT to every paused node, start launches every killed node again in
// its namespace (in the background: done once each answers /healthz), and
// a packet fault goes on its nodes' links until stop-packet.
func (n *Network) Apply(ctx context.Context, f harness.Fault) (harness.Applied, error) {
	switch f.F {
	case nemesis.StartPartition:
		return harness.Applied{}, n.lab.Partition(f.Grudge)
	case nemesis.StopPartition:
		return harness.Applied{}, n.lab.Heal()
	case nemesis.KillOp:
		return harness.Applied{Nodes: n.hit(f.Nodes, (*nodeproc.Node).Kill)}, nil
	case nemesis.PauseOp:
		return harness.Applied{Nodes: n.hit(f.Nodes, (*nodeproc.Node).Pause)}, nil
	case nemesis.ResumeOp:
		now := time.Now()
		return harness.Applied{Nodes: n.hit(n.host.Nodes, func(nd *nodeproc.Node) bool { return nd.Resume(now) })}, nil
	case nemesis.StartOp:
		return n.startKilled(ctx, f.Env), nil
	case nemesis.StartPacket:
		return n.startPacket(f.Settings)
	case nemesis.StopPacket:
		restored := n.packet
		n.packet = nil
		return harness.Applied{Nodes: nonNil(restored)}, n.lab.StopPacket()
	}
	return harness.Applied{}, fmt.Errorf("the real network cannot apply %q", f.F)
}

// startPacket puts a packet fault's settings on its nodes' links: loss
// and delay where their packets arrive, duplication where they leave
// (package netns says exactly how, on a kernel without netem).
func (n *Network) startPacket(settings any) (harness.Applied, error) {
	s, err := nemesis.PacketOf(settings)
	if err != nil {
		return harness.Applied{}, err
	}
	if err := n.lab.StartPacket(s.Nodes, netns.PacketFault(s.LinkFault)); err != nil {
		return harness.Applied{}, err
	}
	n.packet = append(n.packet[:0], s.Nodes...)
	return harness.Applied{Nodes: nonNil(s.Nodes), Value: s}, nil
}

// startKilled starts every killed node again in its namespace, in
// parallel, on its own goroutine; Applied.Done reports once every one
// answers /healthz (its acceptor then stays silent for its boot wait).
// A node that does not come back fails the run.
func (n *Network) startKilled(ctx context.Context, env []string) harness.Applied {
	dead, ids := nodeproc.DownOf(n.nodes)
	return harness.Restarting(ids, &n.restarts, func() error { return n.restart(ctx, dead, env) })
}

// restart launches each of dead again with env and waits until all
// answer /healthz.
func (n *Network) restart(ctx context.Context, dead []*nodeproc.Node, env []string) error {
	ids := make([]string, len(dead))
	for i, nd := range dead {
		ids[i] = nd.ID()
		if _, err := nd.Restart(n.host.EnvOf(nd.ID(), env)); err != nil {
			return fmt.Errorf("restarting node %s: %w", nd.ID(), err)
		}
	}
	if err := n.awaitAll(ctx, ids, healthPath); err != nil {
		return fmt.Errorf("restarting %v: %w", ids, err)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return append([]string(nil), s...)
}
