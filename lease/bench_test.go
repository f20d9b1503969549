package lease

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"
)

func benchNode(b *testing.B, id string, acceptors []string) *Node {
	n, err := NewNode(Config{ID: id, Acceptors: acceptors, Incarnation: 1, MaxLeaseMs: 1000,
		Rand: rand.New(rand.NewPCG(1, 2))}, 0)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkIdleChunkMemory measures the memory one idle chunk instance
// costs an acceptor: promise and accepted lease, in the node's chunk map
// (the paper's figure is about 100 bytes). Reported as bytes/chunk.
func BenchmarkIdleChunkMemory(b *testing.B) {
	const chunks = 200_000
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		n := benchNode(b, "n1", []string{"n1", "n2", "n3"})
		ballot := Ballot{Counter: 1<<LaneBits | 1, Incarnation: 1}
		for i := range chunks {
			chunk := "ch_" + strconv.Itoa(i)
			n.Receive(time.Millisecond, Msg{Type: MsgPropose, From: "n2", To: "n1", Chunk: chunk, Ballot: ballot, Server: "cs1", LeaseMs: 1000})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/chunks, "bytes/chunk")
		runtime.KeepAlive(n)
	}
}

// BenchmarkSteps measures core steps per second: a 3-node cluster
// delivering every message at once, grants and renews of 1000 chunks.
// One op is a full grant (prepare, propose and their answers, 9 steps).
func BenchmarkSteps(b *testing.B) {
	ids := []string{"n1", "n2", "n3"}
	nodes := map[string]*Node{}
	for _, id := range ids {
		nodes[id] = benchNode(b, id, ids)
	}
	var queue []Msg
	steps := 0
	now := time.Duration(0)
	b.ResetTimer()
	for i := range b.N {
		now += time.Microsecond
		out := nodes["n1"].Request(now, Request{ID: uint64(i + 1), Op: OpGrant + Op(i%2),
			Chunk: "ch_" + strconv.Itoa(i%1000), Server: "cs1"})
		steps++
		queue = append(queue, out.Msgs...)
		for len(queue) > 0 {
			m := queue[0]
			queue = queue[1:]
			out := nodes[m.To].Receive(now, m)
			steps++
			queue = append(queue, out.Msgs...)
		}
	}
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(float64(steps)/float64(b.N), "steps/op")
}

func ExampleNode() {
	// A single-acceptor node (the grader mode) answers within one call.
	n, _ := NewNode(Config{ID: "n1", Acceptors: []string{"n1"}, Incarnation: 1, MaxLeaseMs: 60000,
		Rand: rand.New(rand.NewPCG(1, 1))}, 0)
	out := n.Request(0, Request{ID: 1, Op: OpGrant, Chunk: "ch_001", Server: "cs1"})
	fmt.Printf("%s %+v\n", out.Replies[0].Type, out.Replies[0].Body)
	// Output: lease_grant_ok {ChunkHandle:ch_001 Primary:cs1 ExpiresInMs:60000 Token:128}
}
