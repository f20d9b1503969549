//go:build !linux

package netns

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"runtime"
)

// Network namespaces are Linux's: elsewhere Check and Create refuse with
// ErrUnsupported, so no Lab or Namespace ever exists and their methods
// only keep callers compiling.

// Check reports that this system has no network namespaces.
func Check() error {
	return fmt.Errorf("%w: this is %s; run the real-network test on Linux, as root", ErrUnsupported, runtime.GOOS)
}

// Create refuses: see Check.
func Create(context.Context, Config) (*Lab, error) { return nil, Check() }

// CleanStale has nothing to clean where no lab can exist.
func CleanStale() ([]string, error) { return nil, nil }

// KillGroup is not available here.
func KillGroup(int) error { return Check() }

// Lab is a Linux lab; see lab_linux.go.
type Lab struct{}

func (*Lab) Name() string                            { return "" }
func (*Lab) Nodes() []string                         { return nil }
func (*Lab) Node(string) *Namespace                  { return nil }
func (*Lab) Client() *Namespace                      { return nil }
func (*Lab) Partition(map[string][]string) error     { return Check() }
func (*Lab) Heal() error                             { return Check() }
func (*Lab) SetLatency(int) error                    { return Check() }
func (*Lab) StartPacket([]string, PacketFault) error { return Check() }
func (*Lab) StopPacket() error                       { return Check() }
func (*Lab) PacketStats() map[string]PacketStats     { return nil }
func (*Lab) Close() error                            { return nil }

// Namespace is a Linux network namespace; see namespace_linux.go.
type Namespace struct{}

func (*Namespace) ID() string                                  { return "" }
func (*Namespace) Name() string                                { return "" }
func (*Namespace) Addr() netip.Addr                            { return netip.Addr{} }
func (*Namespace) Start(*exec.Cmd) error                       { return Check() }
func (*Namespace) Listen(string, string) (net.Listener, error) { return nil, Check() }
func (*Namespace) ListenPacket(string, string) (net.PacketConn, error) {
	return nil, Check()
}
func (*Namespace) DialContext(context.Context, string, string) (net.Conn, error) {
	return nil, Check()
}
