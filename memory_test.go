package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Memory tests of the real binary: what hostile or merely large input
// costs a node is measured on the process itself (VmRSS and VmHWM from
// /proc/PID/status), as an out-of-memory kill would judge it.

// memNode is one node process for the memory tests, initialised as the
// only node of its cluster (its own sole acceptor: every request is
// answered within the call, so the test can count replies).
type memNode struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  *bufio.Writer
	pipe   io.WriteCloser
	lines  chan []byte // stdout, line by line
	werr   error       // the first error writing stdin
	stderr bytes.Buffer
}

func startMemNode(t *testing.T, env ...string) *memNode {
	t.Helper()
	n := &memNode{t: t, cmd: exec.Command(nodeBin)}
	n.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	n.cmd.Stderr = &n.stderr
	var err error
	if n.pipe, err = n.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := n.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // stopped by its PID, whatever the test's outcome
		n.cmd.Process.Kill()
		n.cmd.Wait()
	})
	n.stdin, n.lines = bufio.NewWriterSize(n.pipe, 1<<20), make(chan []byte, 1024)
	go func() {
		out := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := out.ReadBytes('\n')
			if err != nil {
				close(n.lines)
				return
			}
			n.lines <- line
		}
	}()
	n.send(`{"src":"c0","dest":"n1","body":{"type":"init","msg_id":1,"node_id":"n1","node_ids":["n1"]}}`)
	if err := n.flush(); err != nil {
		t.Fatalf("writing to the node: %v", err)
	}
	if r := n.reply(); r.Body.Type != "init_ok" {
		t.Fatalf("init answered %+v", r)
	}
	return n
}

// send writes one line; the first error is kept for flush to report, so
// a writer goroutine may send too.
func (n *memNode) send(line string) {
	if _, err := n.stdin.WriteString(line + "\n"); err != nil && n.werr == nil {
		n.werr = err
	}
}

// flush writes what send buffered and returns the first write error.
func (n *memNode) flush() error {
	if err := n.stdin.Flush(); err != nil && n.werr == nil {
		n.werr = err
	}
	return n.werr
}

// memReply is the part of a reply these tests read.
type memReply struct {
	Body struct {
		Type      string  `json:"type"`
		InReplyTo int     `json:"in_reply_to"`
		Primary   *string `json:"primary"`
		Code      int     `json:"code"`
		Text      string  `json:"text"`
	} `json:"body"`
}

// replyFailsafe only keeps a node that stopped answering from hanging
// the suite; nothing is timed by it.
const replyFailsafe = time.Minute

// reply reads the next output line.
func (n *memNode) reply() memReply {
	n.t.Helper()
	r, err := n.nextReply()
	if err != nil {
		n.t.Fatal(err)
	}
	return r
}

// nextReply reads the next output line, or says why there is none.
func (n *memNode) nextReply() (memReply, error) {
	var r memReply
	select {
	case line, ok := <-n.lines:
		if !ok {
			return r, fmt.Errorf("the node closed its output\nstderr:\n%s", n.stderr.String())
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return r, fmt.Errorf("output %.200q: %v", line, err)
		}
		return r, nil
	case <-time.After(replyFailsafe):
		return r, fmt.Errorf("no output from the node for %v", replyFailsafe)
	}
}

// procStatusKiB reads one field of /proc/PID/status (VmRSS, VmHWM) in KiB.
func (n *memNode) procStatusKiB(field string) int {
	n.t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", n.cmd.Process.Pid))
	if err != nil {
		n.t.Skipf("no /proc status for the node: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kib, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				n.t.Fatalf("%s: %q: %v", field, line, err)
			}
			return kib
		}
	}
	n.t.Fatalf("no %s in /proc/%d/status", field, n.cmd.Process.Pid)
	return 0
}

// TestMemoryFollowsLiveChunks is the acceptance test for memory that
// follows live state: three waves of 20 000 grants, each to a new server
// with a 1 kB name on a new chunk, with 100 ms leases. After each wave the
// test waits until the node has reclaimed the wave's chunks (observed, see
// waitReclaimed), and reads the node's RSS. A node that kept every server
// name it ever saw grows by about 40 MiB a wave; this one must end the
// third wave within 40 MiB of the first. About 10 s.
func TestMemoryFollowsLiveChunks(t *testing.T) {
	const waves, grants, nameBytes = 3, 20000, 1024
	// LEASE_MAX_MS 2000: the ballot counter may lead the wall clock by a
	// quarter of it (500 ms, 5000 ballots) before the node paces its
	// grants, so a wave of 20 000 is answered within the quorum timeout.
	n := startMemNode(t, "LEASE_MS=100", "LEASE_MAX_MS=2000")
	var rssKiB []int
	id := 100
	for w := range waves {
		pad := strings.Repeat("s", nameBytes-18)
		go func(first int) { // the writer, so that replies are read meanwhile
			for i := range grants {
				n.send(fmt.Sprintf(`{"src":"c1","dest":"n1","body":{"type":"lease_grant","msg_id":%d,"chunk_handle":"w%d-c%d","server":"%s-%08d-%08d"}}`,
					first+i, w, i, pad, w, i))
			}
			n.flush()
		}(id + 1)
		readGrants(t, n, w, id+1, grants, nameBytes)
		id += grants
		// Sentinels go out once every grant of the wave is answered, so
		// their leases end after every lease of the wave (waitReclaimed).
		next := id + 1
		chunks := grantSentinels(n, w, &next)
		if err := n.flush(); err != nil {
			t.Fatalf("writing to the node: %v", err)
		}
		readGrants(t, n, w, id+1, sentinelCount, len("sentinel"))
		id += sentinelCount
		waitReclaimed(t, n, chunks, &id)
		rssKiB = append(rssKiB, n.procStatusKiB("VmRSS"))
		t.Logf("after wave %d (%d grants, %d-byte server names, reclaimed): VmRSS %d KiB", w+1, grants, nameBytes, rssKiB[w])
	}
	if grew := rssKiB[waves-1] - rssKiB[0]; grew > 40<<10 {
		t.Fatalf("RSS grew by %d KiB from the first wave to the third (limit 40 MiB): names or chunks outlive the leases that used them", grew)
	}
}

// readGrants reads count grant replies, in any order (a node that paces
// its ballots answers some later than others), and requires each to be an
// ok grant of a request in [first, first+count) naming a primary of
// nameBytes bytes.
func readGrants(t *testing.T, n *memNode, wave, first, count, nameBytes int) {
	t.Helper()
	seen := make(map[int]bool, count)
	for range count {
		r := n.reply()
		b := r.Body
		if b.Type != "lease_grant_ok" || b.Primary == nil || len(*b.Primary) != nameBytes ||
			b.InReplyTo < first || b.InReplyTo >= first+count || seen[b.InReplyTo] {
			t.Fatalf("wave %d: reply %+v, want one ok grant to each of requests %d..%d naming its %d-byte server", wave, b, first, first+count-1, nameBytes)
		}
		seen[b.InReplyTo] = true
	}
}

// grantSentinels grants, after a wave, sentinel chunks that waitReclaimed
// probes: granted last, their leases end after every lease of the wave.
func grantSentinels(n *memNode, wave int, id *int) []string {
	var chunks []string
	for k := range sentinelCount {
		chunk := fmt.Sprintf("sentinel-%d-%d", wave, k)
		chunks = append(chunks, chunk)
		n.send(fmt.Sprintf(`{"src":"c1","dest":"n1","body":{"type":"lease_grant","msg_id":%d,"chunk_handle":"%s","server":"sentinel"}}`, *id, chunk))
		*id++
	}
	return chunks
}

// sentinelCount is how many sentinels a wave has: probes 100 ms apart
// wait at most 20 s.
const sentinelCount = 200

// waitReclaimed waits until the node has reclaimed every chunk of the
// wave. A check of a reclaimed chunk answers primary null, but a check
// also keeps the chunk it reads from being reclaimed; so each probe reads
// a sentinel never read before. Sentinels were granted after the wave
// with the same lease length, so once one is reclaimed, every chunk of the
// wave, idle at least as long and never read, is reclaimed too. Probes are
// 100 ms apart, at most 200 of them (20 s).
func waitReclaimed(t *testing.T, n *memNode, sentinels []string, id *int) {
	t.Helper()
	for _, chunk := range sentinels {
		*id++
		n.send(fmt.Sprintf(`{"src":"c1","dest":"n1","body":{"type":"lease_check","msg_id":%d,"chunk_handle":"%s"}}`, *id, chunk))
		if err := n.flush(); err != nil {
			t.Fatalf("writing to the node: %v", err)
		}
		r := n.reply()
		if r.Body.Type != "lease_check_ok" {
			t.Fatalf("check of %s: %+v", chunk, r.Body)
		}
		if r.Body.Primary == nil {
			return
		}
		time.Sleep(100 * time.Millisecond) // polling an external process, bounded by the sentinels
	}
	t.Fatalf("the wave's chunks were not reclaimed within %d probes 100 ms apart", len(sentinels))
}

// TestNameLimitsOnTheNode: the binary refuses a server name and a chunk
// handle one byte over their limits with error 12 and both numbers, and
// serves names at the limits.
func TestNameLimitsOnTheNode(t *testing.T) {
	n := startMemNode(t)
	at, over := strings.Repeat("s", 4096), strings.Repeat("s", 4097)
	grant := `{"src":"c1","dest":"n1","body":{"type":"lease_grant","msg_id":%d,"chunk_handle":"%s","server":"%s"}}`
	n.send(fmt.Sprintf(grant, 2, "ch1", over))
	n.send(fmt.Sprintf(grant, 3, over, "cs1"))
	n.send(fmt.Sprintf(grant, 4, at, at))
	if err := n.flush(); err != nil {
		t.Fatalf("writing to the node: %v", err)
	}
	want := []string{
		"server is 4097 bytes; the limit is 4096 bytes (name the chunk server by a shorter id, such as its host:port)",
		"chunk_handle is 4097 bytes; the limit is 4096 bytes",
	}
	for i, text := range want {
		if r := n.reply(); r.Body.Code != 12 || r.Body.InReplyTo != 2+i || r.Body.Text != text {
			t.Fatalf("msg_id %d: %+v, want error 12 %q", 2+i, r.Body, text)
		}
	}
	if r := n.reply(); r.Body.Type != "lease_grant_ok" || r.Body.Primary == nil || *r.Body.Primary != at {
		t.Fatalf("names at the limits: %+v", r.Body)
	}
}

// TestLongLineKeepsMemoryBounded is the acceptance test for the line
// limit: a 256 MiB line without a newline (a lease_grant whose server
// never ends) is refused with error 12 naming the 1 MiB limit, the next
// request is served, and the node's peak RSS (VmHWM) stays under 128 MiB.
// About 1 s.
func TestLongLineKeepsMemoryBounded(t *testing.T) {
	n := startMemNode(t)
	const lineBytes = 256 << 20
	head := `{"src":"c1","dest":"n1","body":{"type":"lease_grant","msg_id":3,"chunk_handle":"ch1","server":"`
	done := make(chan error, 1)
	go func() { // the writer, so that the node's replies are read meanwhile
		w := n.pipe
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		if _, err := io.WriteString(w, head); err != nil {
			done <- err
			return
		}
		for written := len(head); written < lineBytes; written += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				done <- err
				return
			}
		}
		_, err := io.WriteString(w, "\"}}\n"+`{"src":"c1","dest":"n1","body":{"type":"lease_grant","msg_id":4,"chunk_handle":"ch1","server":"cs1"}}`+"\n")
		done <- err
	}()
	// The peak is read whatever the answers, so a failure shows it too.
	long, err1 := n.nextReply()
	next, err2 := n.nextReply()
	if err := <-done; err != nil {
		t.Fatalf("writing the long line: %v", err)
	}
	hwm := n.procStatusKiB("VmHWM")
	t.Logf("after a %d MiB line: VmHWM %d KiB", lineBytes>>20, hwm)
	if hwm > 128<<10 {
		t.Errorf("peak RSS %d KiB after a %d MiB line (limit 128 MiB): the line was held in memory", hwm, lineBytes>>20)
	}
	if b := long.Body; err1 != nil || b.Type != "error" || b.InReplyTo != 3 || b.Code != 12 || !strings.Contains(b.Text, "limit of 1048576 bytes") {
		t.Errorf("the 256 MiB line was answered %s %d (in_reply_to %d; %v), want error 12 naming the limit", b.Type, b.Code, b.InReplyTo, err1)
	}
	if b := next.Body; err2 != nil || b.Type != "lease_grant_ok" || b.InReplyTo != 4 || b.Primary == nil || *b.Primary != "cs1" {
		t.Errorf("the request after the long line was answered %s (in_reply_to %d; %v)", b.Type, b.InReplyTo, err2)
	}
}
