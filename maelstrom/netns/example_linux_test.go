package netns_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os/exec"
	"syscall"

	"chunklease/maelstrom/netns"
)

// The harness's use, in order. (Compiled, not run: it needs root and a
// node binary.)
func Example() {
	ctx := context.Background()
	lab, err := netns.Create(ctx, netns.Config{Nodes: []string{"n1", "n2", "n3"}, Seed: 42, Logf: log.Printf})
	if err != nil {
		log.Fatal(err) // wraps netns.ErrNeedRoot without root: fail loudly, never skip
	}
	defer lab.Close()

	// One node process per namespace; its pid is the program's own.
	cmds := map[string]*exec.Cmd{}
	for _, id := range lab.Nodes() {
		n := lab.Node(id)
		cmd := exec.Command("./lease-node", "serve") // with its id, the cluster and addresses on n.Addr()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := n.Start(cmd); err != nil {
			log.Fatal(err)
		}
		cmds[id] = cmd
	}

	// Clients dial from the client namespace.
	client := &http.Client{Transport: &http.Transport{DialContext: lab.Client().DialContext}}
	resp, err := client.Get("http://" + lab.Node("n1").Addr().String() + ":8080/readyz")
	if err == nil {
		resp.Body.Close()
	}

	// Faults, as values recorded in the history.
	lab.SetLatency(10)
	lab.Partition(map[string][]string{"n1": {"n2"}, "n2": {"n3"}, "n3": {"n1"}})
	f := netns.PacketFault{DelayMs: 50, JitterMs: 10, LossPct: 20, DuplicatePct: 5, ReorderPct: 10}
	lab.StartPacket([]string{"n2"}, f)
	fmt.Println("start-packet", f) // delay 50ms ±10ms, loss 20%, duplicate 5%, reorder 10%
	syscall.Kill(-cmds["n3"].Process.Pid, syscall.SIGSTOP)
	syscall.Kill(-cmds["n3"].Process.Pid, syscall.SIGCONT)
	netns.KillGroup(cmds["n1"].Process.Pid)
	cmds["n1"].Wait()

	// The final phase heals everything.
	lab.Heal()
	lab.StopPacket()
	fmt.Println(lab.PacketStats()["n2"].Delayed > 0)
}
