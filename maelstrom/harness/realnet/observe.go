package realnet

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"chunklease/maelstrom/harness/nodeproc"
	"chunklease/maelstrom/netns"
)

// Observations are what the real network can tell cheaply that the
// simulated one tells differently (it counts messages; the kernel carries
// these): results.json's "network_observed".
type Observations struct {
	Lab       string `json:"lab"`        // the namespaces' prefix (ip netns list)
	LatencyMs int    `json:"latency_ms"` // the constant delay on node-to-node packets
	// Nodes are per node: its address, its programs, peak memory, what
	// the userspace delay path did with the packets it sent, and its
	// namespace's TCP counters at the end.
	Nodes map[string]NodeObservation `json:"nodes"`
}

// NodeObservation is one node's figures.
type NodeObservation struct {
	Address  string  `json:"address"`
	Programs int     `json:"programs"` // started: 1 + restarts
	PeakMiB  float64 `json:"peak_mib"` // the largest VmHWM of its programs, read as each was killed
	// Packets is what the delay path did with the packets this node sent
	// (held for a delay, sent on at once, how late) over the run; the
	// kernel's loss and duplication rules are not counted there.
	Packets netns.PacketStats `json:"packets"`
	// TCP are the namespace's counters (/proc/<pid>/net/snmp, read from
	// the node's last program before it was stopped): client and peer
	// connections together. Nil when no program was running at the end.
	TCP map[string]int64 `json:"tcp"`
}

// tcpCounters are the TCP counters kept: segments, retransmissions,
// resets and connection attempts (RFC 4022's names, as /proc shows them).
var tcpCounters = []string{"ActiveOpens", "PassiveOpens", "AttemptFails", "EstabResets", "InSegs", "OutSegs", "RetransSegs", "InErrs", "OutRsts"}

// observe reads what the kernel and the delay paths counted, before the
// programs and the lab go.
func (n *Network) observe() *Observations {
	if n.lab == nil {
		return nil
	}
	o := &Observations{Lab: n.lab.Name(), LatencyMs: n.cfg.LatencyMs, Nodes: map[string]NodeObservation{}}
	packets := n.lab.PacketStats()
	for i, id := range n.host.Nodes {
		obs := NodeObservation{Address: n.lab.Node(id).Addr().String(), Packets: packets[id]}
		if nd := n.nodes[i]; nd != nil {
			obs.Programs = len(nd.Incarnations())
			if inc := nd.Current(); inc != nil {
				obs.TCP = readTCP(inc.Proc().PID())
			}
		}
		o.Nodes[id] = obs
	}
	return o
}

// fillMemory adds each node's peak memory, known once its programs were
// killed.
func (o *Observations) fillMemory(nodes []*nodeproc.Node, ids []string) {
	for i, id := range ids {
		if nd := nodes[i]; nd != nil {
			obs := o.Nodes[id]
			obs.PeakMiB = float64(nd.PeakMemoryKiB()) / 1024
			o.Nodes[id] = obs
		}
	}
}

// readTCP reads the TCP counters of pid's network namespace; nil when
// they cannot be read.
func readTCP(pid int) map[string]int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/net/snmp", pid))
	if err != nil {
		return nil
	}
	defer f.Close()
	return parseSNMP(bufio.NewScanner(f), "Tcp:", tcpCounters)
}

// parseSNMP reads /proc/net/snmp's pair of lines for proto (a header of
// names, then the values) and keeps the named counters.
func parseSNMP(sc *bufio.Scanner, proto string, keep []string) map[string]int64 {
	var names []string
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != proto {
			continue
		}
		if names == nil {
			names = fields[1:]
			continue
		}
		out := map[string]int64{}
		for i, v := range fields[1:] {
			if i < len(names) && slices.Contains(keep, names[i]) {
				out[names[i]], _ = strconv.ParseInt(v, 10, 64)
			}
		}
		return out
	}
	return nil
}

// Summary is the console's line: what the kernel carried, in brief.
func (o *Observations) Summary() string {
	var programs int
	var held, out, retrans int64
	for _, nd := range o.Nodes {
		programs += nd.Programs
		held += int64(nd.Packets.Delayed)
		out += nd.TCP["OutSegs"]
		retrans += nd.TCP["RetransSegs"]
	}
	return fmt.Sprintf("lab %s, %d node programs; %d packets held by delay paths; TCP %d segments sent, %d retransmitted (results.json network_observed)",
		o.Lab, programs, held, out, retrans)
}
