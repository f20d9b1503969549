package netns

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	mdnetlink "github.com/mdlayher/netlink"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// The lab's addresses: 198.18.0.0/15 is reserved for network tests (RFC
// 2544), and the lab's namespaces reach nothing else anyway.
var (
	labSubnet  = netip.MustParsePrefix("198.18.0.0/24")
	nodeBlock  = netip.MustParsePrefix("198.18.0.0/25") // nodes: .1 to .126
	clientAddr = netip.MustParseAddr("198.18.0.254")
)

// Link names: inside a member's namespace its one link is eth0; in the
// switch's namespace the bridge is br0 and member i's port is p<i>
// (client p0, nodes p1..pN). These names live inside the lab's own
// namespaces, so they never meet the root namespace's.
const (
	memberLink = "eth0"
	bridgeLink = "br0"
)

// nodeAddr is the address of the i-th node (from 0).
func nodeAddr(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{198, 18, 0, byte(i + 1)})
}

// wire builds the switch: a bridge in the switch's namespace and, for
// every member, a veth pair created there with its far end placed
// directly in the member's namespace (nothing passes through the root
// namespace), then the member's loopback and address.
func (l *Lab) wire() error {
	hs, err := netlink.NewHandleAt(l.sw.handle)
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", l.sw.name, err)
	}
	defer hs.Close()
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: bridgeLink}}
	if err := hs.LinkAdd(br); err != nil {
		return fmt.Errorf("bridge %s in %s: %w", bridgeLink, l.sw.name, err)
	}
	if err := setUp(hs, "lo"); err != nil {
		return err
	}
	if err := hs.LinkSetUp(br); err != nil {
		return fmt.Errorf("bridge up: %w", err)
	}
	for i, m := range l.members() {
		if err := attach(hs, br.Attrs().Index, fmt.Sprintf("p%d", i), m); err != nil {
			return fmt.Errorf("link for %s: %w", m.name, err)
		}
	}
	return nil
}

// attach plugs member m into the bridge through port (in the switch).
func attach(hs *netlink.Handle, bridgeIndex int, port string, m *Namespace) error {
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: port, MasterIndex: bridgeIndex},
		PeerName:      memberLink,
		PeerNamespace: netlink.NsFd(int(m.handle)),
	}
	if err := hs.LinkAdd(veth); err != nil {
		return fmt.Errorf("veth %s/%s: %w", port, memberLink, err)
	}
	if err := hs.LinkSetUp(veth); err != nil {
		return fmt.Errorf("port %s up: %w", port, err)
	}
	h, err := netlink.NewHandleAt(m.handle)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := setUp(h, "lo"); err != nil {
		return err
	}
	eth, err := h.LinkByName(memberLink)
	if err != nil {
		return err
	}
	ipnet := &net.IPNet{IP: m.addr.AsSlice(), Mask: net.CIDRMask(labSubnet.Bits(), 32)}
	if err := h.AddrAdd(eth, &netlink.Addr{IPNet: ipnet}); err != nil {
		return fmt.Errorf("address %s: %w", m.addr, err)
	}
	if err := h.LinkSetUp(eth); err != nil {
		return fmt.Errorf("%s up: %w", memberLink, err)
	}
	if m.shaper != nil {
		m.shaper.ifindex = uint32(eth.Attrs().Index)
	}
	return nil
}

func setUp(h *netlink.Handle, name string) error {
	link, err := h.LinkByName(name)
	if err != nil {
		return fmt.Errorf("link %s: %w", name, err)
	}
	if err := h.LinkSetUp(link); err != nil {
		return fmt.Errorf("link %s up: %w", name, err)
	}
	return nil
}

// linkReadyTimeout bounds the wait for the kernel to bring the lab's
// links into service.
const linkReadyTimeout = 5 * time.Second

// waitLinks returns once every member's eth0 is operationally up and
// every bridge port forwards. The kernel finishes bringing a link up
// asynchronously (linkwatch: operational state, the transmit queue, the
// bridge's port state, up to a second later); a packet sent before that
// is dropped, and a lost first ARP request stalls a pair for a second.
func (l *Lab) waitLinks(ctx context.Context) error {
	deadline := time.Now().Add(linkReadyTimeout)
	for {
		waiting, err := l.linksNotReady()
		if err != nil || len(waiting) == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("links not in service after %v: %s", linkReadyTimeout, strings.Join(waiting, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// linksNotReady names the links still coming up.
func (l *Lab) linksNotReady() ([]string, error) {
	var waiting []string
	for _, m := range l.members() {
		h, err := netlink.NewHandleAt(m.handle)
		if err != nil {
			return nil, err
		}
		eth, err := h.LinkByName(memberLink)
		h.Close()
		if err != nil {
			return nil, err
		}
		if eth.Attrs().OperState != netlink.OperUp {
			waiting = append(waiting, fmt.Sprintf("%s in %s is %s", memberLink, m.name, eth.Attrs().OperState))
		}
	}
	states, err := bridgePortStates(l.sw)
	if err != nil {
		return nil, err
	}
	for i := range l.members() {
		port := fmt.Sprintf("p%d", i)
		if st, ok := states[port]; !ok || st != brStateForwarding {
			waiting = append(waiting, fmt.Sprintf("bridge port %s is in state %d", port, st))
		}
	}
	return waiting, nil
}

// Bridge port states (linux/if_bridge.h), as IFLA_BRPORT_STATE reports.
const (
	brStateForwarding = 3
	iflaIfname        = 3  // IFLA_IFNAME
	iflaProtinfo      = 12 // IFLA_PROTINFO, nested IFLA_BRPORT_*
	iflaBrportState   = 1  // IFLA_BRPORT_STATE, u8
)

// bridgePortStates asks the switch's kernel for every bridge port's state
// (RTM_GETLINK dump, family AF_BRIDGE), by port name. vishvananda/netlink
// does not report the state, so this speaks the message itself.
func bridgePortStates(sw *Namespace) (map[string]uint8, error) {
	c, err := mdnetlink.Dial(unix.NETLINK_ROUTE, &mdnetlink.Config{NetNS: int(sw.handle)})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ifinfo := make([]byte, 16) // struct ifinfomsg, all zero but the family
	ifinfo[0] = unix.AF_BRIDGE
	msgs, err := c.Execute(mdnetlink.Message{
		Header: mdnetlink.Header{Type: unix.RTM_GETLINK, Flags: mdnetlink.Request | mdnetlink.Dump},
		Data:   ifinfo,
	})
	if err != nil {
		return nil, fmt.Errorf("bridge port states in %s: %w", sw.name, err)
	}
	states := map[string]uint8{}
	for _, m := range msgs {
		if len(m.Data) < 16 {
			continue
		}
		name, state, ok := portState(m.Data[16:])
		if ok {
			states[name] = state
		}
	}
	return states, nil
}

func portState(attrs []byte) (name string, state uint8, ok bool) {
	ad, err := mdnetlink.NewAttributeDecoder(attrs)
	if err != nil {
		return "", 0, false
	}
	for ad.Next() {
		switch ad.Type() {
		case iflaIfname:
			name = ad.String()
		case iflaProtinfo:
			ad.Nested(func(nad *mdnetlink.AttributeDecoder) error {
				for nad.Next() {
					if nad.Type() == iflaBrportState {
						state, ok = nad.Uint8(), true
					}
				}
				return nil
			})
		}
	}
	return name, state, ok && ad.Err() == nil
}
