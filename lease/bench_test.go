package lease

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func benchNode(b *testing.B, id string, acceptors []string) *Node {
	n, err := NewNode(Config{ID: id, Acceptors: acceptors, Incarnation: 1, Nonce: 1, MaxLeaseMs: 1000,
		Rand: rand.New(rand.NewPCG(1, 2))}, 0)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkChunkMemory measures what chunk instances cost an acceptor,
// with their map slots and chunk names ("ch_0".."ch_999999"), for
// 1 000 000 chunks: while every chunk's lease is live, once every lease
// has ended (idle instances, the paper's "about 100 bytes"), and after
// two sweeps reclaimed the idle ones. Reported as bytes/chunk of live heap
// and as the process's heap in use.
func BenchmarkChunkMemory(b *testing.B) {
	const chunks = 1_000_000
	names := make([]string, chunks)
	for i := range names {
		names[i] = "ch_" + strconv.Itoa(i)
	}
	for range b.N {
		n := benchNode(b, "n1", []string{"n1", "n2", "n3"})
		base := heapInUse()
		ballot := Ballot{Counter: 1<<LaneBits | 1, Incarnation: 1}
		for _, chunk := range names {
			n.Receive(time.Millisecond, Msg{Type: MsgPropose, From: "n2", To: "n1", Chunk: chunk, Ballot: ballot, Server: "cs1", LeaseMs: 1000})
		}
		b.ReportMetric(float64(heapInUse()-base)/chunks, "live-bytes/chunk")
		for i, chunk := range names { // a read after the end drops each lease
			n.Receive(2*time.Second, Msg{Type: MsgRead, From: "n2", To: "n1", Chunk: chunk, ReqID: uint64(i)})
		}
		b.ReportMetric(float64(heapInUse()-base)/chunks, "idle-bytes/chunk")
		b.ReportMetric(float64(heapInUse())/(1<<20), "idle-heap-MiB")
		if rss, ok := rssBytes(); ok {
			b.ReportMetric(float64(rss)/(1<<20), "idle-rss-MiB")
		}
		n.Tick(5 * time.Second)
		n.Tick(7 * time.Second)
		if n.chunks.len() != 0 {
			b.Fatalf("%d idle chunks were not reclaimed", n.chunks.len())
		}
		b.ReportMetric(float64(heapInUse()-base)/chunks, "reclaimed-bytes/chunk")
		runtime.KeepAlive(n)
	}
}

// BenchmarkNameMemory measures what distinct server names cost: 100 000
// chunks, each granted to its own server with a 1 kB name, while the
// leases are live and after the sweeps reclaimed the chunks. Reported as
// bytes/chunk of live heap; after the reclaim nothing of the names should
// be left.
func BenchmarkNameMemory(b *testing.B) {
	const chunks, nameBytes = 100_000, 1024
	names, servers := make([]string, chunks), make([]string, chunks)
	pad := strings.Repeat("s", nameBytes-8)
	for i := range names {
		names[i], servers[i] = "ch_"+strconv.Itoa(i), fmt.Sprintf("%s%08d", pad, i)
	}
	for range b.N {
		n := benchNode(b, "n1", []string{"n1", "n2", "n3"})
		base := heapInUse()
		ballot := Ballot{Counter: 1<<LaneBits | 1, Incarnation: 1}
		for i, chunk := range names {
			// Each name fresh, as decoding a message makes it.
			server := strings.Clone(servers[i])
			n.Receive(time.Millisecond, Msg{Type: MsgPropose, From: "n2", To: "n1", Chunk: chunk, Ballot: ballot, Server: server, LeaseMs: 1000})
		}
		b.ReportMetric(float64(heapInUse()-base)/chunks, "live-bytes/chunk")
		n.Tick(5 * time.Second)
		n.Tick(7 * time.Second)
		if n.chunks.len() != 0 {
			b.Fatalf("%d idle chunks were not reclaimed", n.chunks.len())
		}
		b.ReportMetric(float64(heapInUse()-base)/chunks, "reclaimed-bytes/chunk")
		runtime.KeepAlive(n)
	}
}

// rssBytes reads the process's resident set size on Linux.
func rssBytes() (int64, bool) {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(data), &size, &resident); err != nil {
		return 0, false
	}
	return resident * int64(os.Getpagesize()), true
}

// heapInUse is the live heap after a collection, in bytes.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
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
	n, _ := NewNode(Config{ID: "n1", Acceptors: []string{"n1"}, Incarnation: 1, Nonce: 1, MaxLeaseMs: 60000,
		Rand: rand.New(rand.NewPCG(1, 1))}, 0)
	out := n.Request(0, Request{ID: 1, Op: OpGrant, Chunk: "ch_001", Server: "cs1"})
	fmt.Printf("%s %+v\n", out.Replies[0].Type, out.Replies[0].Body)
	// Output: lease_grant_ok {ChunkHandle:ch_001 Primary:cs1 ExpiresInMs:60000 Token:128}
}
