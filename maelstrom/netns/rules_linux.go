package netns

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/xt"
	"golang.org/x/sys/unix"
)

// A node's rules: one nftables table (family ip, named after the lab) in
// the node's namespace with three base chains, all policy accept:
//
//	partition   hook input,  priority -10:  ip saddr <sender> counter drop        (one per sender it drops)
//	packet-in   hook input,  priority 0:    for each sender X under a packet fault:
//	                ip saddr X numgen random mod 10000 < loss counter drop
//	                ip saddr X counter xt target NFQUEUE num <X's queue>        (the userspace delay path)
//	packet-out  hook output, priority 0:    out of eth0 to 198.18.0.0/25 (other nodes), under its own fault:
//	                numgen random mod 10000 < dup dup to ip daddr device eth0
//
// A fault on node X's link is carried out where X's packets arrive (loss,
// delay) so the sender never sees it: a drop on output would fail the
// sender's send with EPERM, and a packet held on output would still be
// charged to the sending socket's buffer and throttle it; netem on a real
// link does neither. Only duplication runs at the sender: its copy is
// sent at once and holds nothing. Each chain is rewritten whole in one
// netlink batch, so a change is atomic within the node.
const (
	chainPartition = "partition"
	chainInbound   = "packet-in"
	chainOutbound  = "packet-out"
)

type ruleset struct {
	conn      *nftables.Conn
	table     *nftables.Table
	partition *nftables.Chain
	inbound   *nftables.Chain
	outbound  *nftables.Chain
}

// newRuleset creates the node's table and its three empty chains.
func newRuleset(n *Namespace, tableName string) (*ruleset, error) {
	conn, err := nftables.New(nftables.WithNetNSFd(int(n.handle)), nftables.AsLasting())
	if err != nil {
		return nil, fmt.Errorf("nftables in %s: %w", n.name, err)
	}
	r := &ruleset{conn: conn}
	r.table = conn.AddTable(&nftables.Table{Family: nftables.TableFamilyIPv4, Name: tableName})
	r.partition = r.addChain(chainPartition, nftables.ChainHookInput, -10)
	r.inbound = r.addChain(chainInbound, nftables.ChainHookInput, 0)
	r.outbound = r.addChain(chainOutbound, nftables.ChainHookOutput, 0)
	if err := conn.Flush(); err != nil {
		conn.CloseLasting()
		return nil, fmt.Errorf("nftables table %s in %s: %w", tableName, n.name, err)
	}
	return r, nil
}

func (r *ruleset) addChain(name string, hook *nftables.ChainHook, priority nftables.ChainPriority) *nftables.Chain {
	accept := nftables.ChainPolicyAccept
	return r.conn.AddChain(&nftables.Chain{Name: name, Table: r.table, Type: nftables.ChainTypeFilter,
		Hooknum: hook, Priority: nftables.ChainPriorityRef(priority), Policy: &accept})
}

func (r *ruleset) close() { r.conn.CloseLasting() }

// setDrops makes the partition chain drop exactly the packets from
// senders (none: healed).
func (r *ruleset) setDrops(senders []netip.Addr) error {
	r.conn.FlushChain(r.partition)
	for _, s := range senders {
		r.addRule(r.partition, fromSender(s), &expr.Counter{}, &expr.Verdict{Kind: expr.VerdictDrop})
	}
	return r.conn.Flush()
}

// inbound is what a receiver does to the packets of one sender under a
// packet fault.
type inbound struct {
	from    netip.Addr
	lossPct float64
	queue   uint16 // the sender's queue; 0: not delayed
}

// setInbound makes the packet-in chain carry out rules.
func (r *ruleset) setInbound(rules []inbound) error {
	r.conn.FlushChain(r.inbound)
	for _, in := range rules {
		if in.lossPct > 0 {
			r.addRule(r.inbound, fromSender(in.from), chance(in.lossPct), &expr.Counter{}, &expr.Verdict{Kind: expr.VerdictDrop})
		}
		if in.queue != 0 {
			r.addRule(r.inbound, fromSender(in.from), &expr.Counter{}, nfqueueTarget(in.queue))
		}
	}
	return r.conn.Flush()
}

// setDuplicate makes the packet-out chain send a second copy of pct
// percent of the packets leaving through ifindex to other nodes (0: none).
func (r *ruleset) setDuplicate(pct float64, ifindex uint32) error {
	r.conn.FlushChain(r.outbound)
	if pct > 0 {
		toNode := []expr.Any{
			&expr.Meta{Key: expr.MetaKeyOIF, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binary.NativeEndian.AppendUint32(nil, ifindex)},
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4}, // ip daddr
			&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
				Mask: net4Mask(nodeBlock.Bits()), Xor: []byte{0, 0, 0, 0}},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: nodeBlock.Addr().AsSlice()},
		}
		r.addRule(r.outbound, toNode, chance(pct),
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4}, // ip daddr
			&expr.Immediate{Register: 2, Data: binary.NativeEndian.AppendUint32(nil, ifindex)},
			&expr.Dup{RegAddr: 1, RegDev: 2, IsRegDevSet: true},
		)
	}
	return r.conn.Flush()
}

// addRule appends a rule made of match expressions, then more.
func (r *ruleset) addRule(chain *nftables.Chain, match []expr.Any, more ...any) {
	exprs := append([]expr.Any(nil), match...)
	for _, m := range more {
		switch m := m.(type) {
		case []expr.Any:
			exprs = append(exprs, m...)
		case expr.Any:
			exprs = append(exprs, m)
		}
	}
	r.conn.AddRule(&nftables.Rule{Table: r.table, Chain: chain, Exprs: exprs})
}

// fromSender matches ip saddr == from.
func fromSender(from netip.Addr) []expr.Any {
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4}, // ip saddr
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: from.AsSlice()},
	}
}

// chance matches pct percent of packets: numgen random mod 10000 <
// permyriad. numgen leaves a host-order integer in the register and cmp
// compares bytes, so it is turned to network order first (as nft does).
func chance(pct float64) []expr.Any {
	return []expr.Any{
		&expr.Numgen{Register: 1, Modulus: 10000, Type: unix.NFT_NG_RANDOM},
		&expr.Byteorder{SourceRegister: 1, DestRegister: 1, Op: expr.ByteorderHton, Len: 4, Size: 4},
		&expr.Cmp{Op: expr.CmpOpLt, Register: 1, Data: binary.BigEndian.AppendUint32(nil, permyriad(pct))},
	}
}

func net4Mask(bits int) []byte {
	m := uint32(0xffffffff) << (32 - bits)
	return binary.BigEndian.AppendUint32(nil, m)
}

// nfqueueTarget is iptables' NFQUEUE target (xt_NFQUEUE, revision 1:
// struct xt_NFQ_info_v1 {u16 queuenum; u16 queues_total}, host order),
// run through nft_compat: this kernel has no nft queue expression
// (CONFIG_NFT_QUEUE) but has the xt target and nft_compat. nft_compat
// wants the info padded to 8 bytes (XT_ALIGN). No bypass flag: a packet
// queued while nobody listens is dropped, which shows a bug instead of
// hiding it; the lab binds the queue before the rule exists and removes
// the rule before it unbinds. Each sender has its own queue number (its
// index + 1), so the receiver knows whose fault to apply.
func nfqueueTarget(num uint16) *expr.Target {
	info := make([]byte, 8)
	binary.NativeEndian.PutUint16(info[0:], num)
	binary.NativeEndian.PutUint16(info[2:], 1) // queues_total
	u := xt.Unknown(info)
	return &expr.Target{Name: "NFQUEUE", Rev: 1, Info: &u}
}

// dropCounts reads the partition chain's counters: packets dropped from
// each sender since the chain was last written.
func (r *ruleset) dropCounts() (map[netip.Addr]uint64, error) {
	rules, err := r.conn.GetRules(r.table, r.partition)
	if err != nil {
		return nil, err
	}
	counts := map[netip.Addr]uint64{}
	for _, rule := range rules {
		var from netip.Addr
		for _, e := range rule.Exprs {
			switch e := e.(type) {
			case *expr.Cmp:
				from, _ = netip.AddrFromSlice(e.Data)
			case *expr.Counter:
				counts[from] += e.Packets
			}
		}
	}
	return counts, nil
}
