package netns

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	vnetns "github.com/vishvananda/netns"
)

// Namespace is one member of a lab: a node, the client or the switch.
// Its methods make sockets and processes inside it, from a harness that
// itself stays in its own namespace.
type Namespace struct {
	lab    *Lab
	id     string // node id, "client" or "switch"
	name   string // the file name under /run/netns
	handle vnetns.NsHandle
	inode  uint64
	origin vnetns.NsHandle // the harness's namespace, where threads go back
	addr   netip.Addr      // invalid for the switch
	shaper *shaper         // node namespaces only
}

// ID is the node id, or "client".
func (n *Namespace) ID() string { return n.id }

// Name is the namespace's name as `ip netns list` shows it, for
// `ip netns exec NAME ...` when a person looks inside.
func (n *Namespace) Name() string { return n.name }

// Addr is the namespace's address on the lab's switch.
func (n *Namespace) Addr() netip.Addr { return n.addr }

// newNamespace creates the named namespace (mounted at
// /run/netns/<name>, as `ip netns add` does) from a thread that comes
// back to origin afterwards.
func newNamespace(id, name string, origin vnetns.NsHandle) (*Namespace, error) {
	n := &Namespace{id: id, name: name, handle: vnetns.None(), origin: origin}
	err := onThread(origin, func() error {
		h, err := vnetns.NewNamed(name)
		if err != nil {
			return err
		}
		n.handle = h
		return disableIPv6()
	})
	if err != nil {
		return n, fmt.Errorf("create namespace %s: %w", name, err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(n.handle), &st); err != nil {
		return n, fmt.Errorf("namespace %s: %w", name, err)
	}
	n.inode = st.Ino
	return n, nil
}

// disableIPv6 turns IPv6 off in the calling thread's namespace before any
// link exists: the lab's rules speak IPv4, and IPv6 link-local traffic
// would go around them (a partition must not leak).
func disableIPv6() error {
	for _, p := range []string{"/proc/sys/net/ipv6/conf/default/disable_ipv6", "/proc/sys/net/ipv6/conf/all/disable_ipv6"} {
		err := os.WriteFile(p, []byte("1"), 0)
		if os.IsNotExist(err) {
			return nil // a kernel without IPv6
		}
		if err != nil {
			return fmt.Errorf("disable IPv6: %w", err)
		}
	}
	return nil
}

// onThread runs f on a fresh goroutine locked to its OS thread. f starts
// in whatever namespace that thread is in; f may change it. Afterwards the
// thread goes back to origin; if it cannot, it is not unlocked, so the
// runtime ends the thread with the goroutine and no other goroutine ever
// runs in the wrong namespace.
func onThread(origin vnetns.NsHandle, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		ferr := f()
		if err := vnetns.Set(origin); err != nil {
			errc <- fmt.Errorf("return to the harness's namespace: %w (the thread is retired)", err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// do runs f on a thread inside n. Sockets f creates belong to n for their
// whole life; a process f starts begins in n.
func (n *Namespace) do(f func() error) error {
	return onThread(n.origin, func() error {
		if err := vnetns.Set(n.handle); err != nil {
			return fmt.Errorf("enter %s: %w", n.name, err)
		}
		return f()
	})
}

// Start starts cmd inside n, as exec.Cmd.Start does: cmd.Process.Pid is
// the program's own pid (no wrapper), so the caller can signal, wait for
// and restart it. The caller's cmd.SysProcAttr applies (Setpgid for
// KillGroup; Pdeathsig works too: the starting thread stays alive).
func (n *Namespace) Start(cmd *exec.Cmd) error {
	return n.do(cmd.Start)
}

// DialContext connects from inside n, with the signature of
// http.Transport.DialContext. The address must be an IP literal inside
// the lab (198.18.0.0/24): nothing leaves the lab, and no name lookup
// runs on another thread in another namespace.
func (n *Namespace) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if err := insideLab(address); err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	var c net.Conn
	err := n.do(func() (err error) {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, address)
		return err
	})
	return c, err
}

// Listen listens inside n (net.Listen's arguments), e.g. a test server
// on ":7000" or on n.Addr().
func (n *Namespace) Listen(network, address string) (net.Listener, error) {
	var l net.Listener
	err := n.do(func() (err error) {
		l, err = net.Listen(network, address)
		return err
	})
	return l, err
}

// ListenPacket opens a packet socket inside n (net.ListenPacket's
// arguments); its datagrams to other members go over the lab's links.
func (n *Namespace) ListenPacket(network, address string) (net.PacketConn, error) {
	var c net.PacketConn
	err := n.do(func() (err error) {
		c, err = net.ListenPacket(network, address)
		return err
	})
	return c, err
}

// insideLab accepts "ip:port" with ip in the lab's subnet.
func insideLab(address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("address %q: the lab dials IP literals only (host:port): %v", address, err)
	}
	if !labSubnet.Contains(ap.Addr()) {
		return fmt.Errorf("address %s is outside the lab (%s): nothing may leave the lab", ap.Addr(), labSubnet)
	}
	return nil
}
