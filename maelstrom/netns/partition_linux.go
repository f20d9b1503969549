package netns

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
)

// Partition makes the network exactly grudge: each receiver (a node id)
// drops every packet from each of its senders (node ids), on input, as
// Jepsen's iptables partitions do. A directed grudge cuts one direction
// only. It replaces the partition in place: a node the grudge does not
// name drops nothing. Client traffic is never dropped. An unknown id, or
// a node that drops itself, is an error and changes nothing.
func (l *Lab) Partition(grudge map[string][]string) error {
	drops, err := l.grudgeAddrs(grudge)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errClosed
	}
	var errs []error
	for _, n := range l.nodes {
		if err := n.shaper.rules.setDrops(drops[n.id]); err != nil {
			errs = append(errs, fmt.Errorf("partition rules in %s: %w", n.name, err))
		}
	}
	return errors.Join(errs...)
}

// Heal removes every partition rule at once (Jepsen's heal); packet
// faults and latency stay.
func (l *Lab) Heal() error { return l.Partition(nil) }

// grudgeAddrs checks grudge and turns it into each receiver's sorted,
// distinct sender addresses.
func (l *Lab) grudgeAddrs(grudge map[string][]string) (map[string][]netip.Addr, error) {
	drops := map[string][]netip.Addr{}
	for receiver, senders := range grudge {
		if l.byID[receiver] == nil {
			return nil, fmt.Errorf("grudge: receiver %q is not a node of this lab (%v)", receiver, l.cfg.Nodes)
		}
		for _, s := range senders {
			from := l.byID[s]
			switch {
			case from == nil:
				return nil, fmt.Errorf("grudge: %s drops %q, which is not a node of this lab (%v)", receiver, s, l.cfg.Nodes)
			case s == receiver:
				return nil, fmt.Errorf("grudge: %s drops itself", receiver)
			}
			drops[receiver] = append(drops[receiver], from.addr)
		}
		slices.SortFunc(drops[receiver], func(a, b netip.Addr) int { return a.Compare(b) })
		drops[receiver] = slices.Compact(drops[receiver])
	}
	return drops, nil
}
