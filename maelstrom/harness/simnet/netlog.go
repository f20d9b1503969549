package simnet

import (
	"context"
	"encoding/json"

	"chunklease/maelstrom/netsim"
)

// network is the simulated network as the harness's nodes and clients
// use it: with --log-net-send and --log-net-recv it logs every accepted
// send and every delivery on the console, as Maelstrom logs ":send" and
// ":recv" with the message (the message is written as the node receives
// it on stdin, without the newline).
type network struct {
	*netsim.Net
	console          func(line string) // the console
	logSend, logRecv bool
}

// Send sends one message and logs it when --log-net-send is on.
func (n *network) Send(src, dest string, body json.RawMessage) (netsim.Message, error) {
	m, err := n.Net.Send(src, dest, body)
	if err == nil && n.logSend {
		n.log(":send ", m)
	}
	return m, err
}

// Recv delivers the next message to name and logs it when --log-net-recv
// is on.
func (n *network) Recv(ctx context.Context, name string) (netsim.Message, error) {
	m, err := n.Net.Recv(ctx, name)
	if err == nil && n.logRecv {
		n.log(":recv ", m)
	}
	return m, err
}

// RecvReady returns a message already due without waiting, logged as
// Recv logs it.
func (n *network) RecvReady(name string) (netsim.Message, bool) {
	m, ok := n.Net.RecvReady(name)
	if ok && n.logRecv {
		n.log(":recv ", m)
	}
	return m, ok
}

func (n *network) log(prefix string, m netsim.Message) {
	line := m.Line()
	n.console(prefix + string(line[:len(line)-1]))
}
