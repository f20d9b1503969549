// Command fakenode is a scripted node program for the harness's tests.
// Its behaviour is chosen by its first argument:
//
//	echo                 a correct echo node
//	wrong-echo           answers every echo with a different text
//	bad=KIND             answers init, then prints one bad line of KIND
//	                     when the first echo arrives (see badLine)
//	exit-after-init=N    answers init, then exits with status N when the
//	                     first echo arrives
//	silent               never answers anything
//	init-error           answers init with an error
//	init-wrong-type      answers init with an echo_ok
//	spawn-child          a correct echo node that also starts a child
//	                     process (this program in mode sleep) and reports
//	                     its pid on stderr as "child-pid N"
//	sleep                blocks forever
//	lease                a lease table in this process alone: correct as
//	                     a single node, split-brained with several. It
//	                     honours LEASE_BOOT_WAIT_MS: for that long after
//	                     it starts it answers every lease request with
//	                     error 11, so a restarted single node cannot
//	                     grant a lease its earlier incarnation granted
//	                     and forgot
//	lease-unavailable-after=MS
//	                     the lease table, answering every lease request
//	                     with error 11 from MS ms after init on
//
// Every mode writes "started <args> cwd=<dir> FAKE_ENV=<value>" on stderr
// first, followed by the LEASE_* variables that are set, so tests can
// check how it was launched, and then what lease-node's clocks say about
// the clock-fault variables (package internal/clock): built with -tags
// clockfault, it follows LEASE_CLOCK_FILE as lease-node does, and so
// passes the harness's check for the clock nemesis.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"chunklease/internal/clock"
)

type message struct {
	Src  string          `json:"src"`
	Dest string          `json:"dest"`
	Body json.RawMessage `json:"body"`
}

type body struct {
	Type    string          `json:"type"`
	MsgID   int64           `json:"msg_id"`
	Echo    json.RawMessage `json:"echo"`
	Node    string          `json:"node_id"`
	Chunk   string          `json:"chunk_handle"`
	Server  string          `json:"server"`
	LeaseMs int64           `json:"lease_ms"`
	Token   *int64          `json:"token"`
}

var out = bufio.NewWriter(os.Stdout)

func main() {
	mode := "echo"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	cwd, _ := os.Getwd()
	fmt.Fprintf(os.Stderr, "started %s cwd=%s FAKE_ENV=%s%s\n", strings.Join(os.Args[1:], " "), cwd, os.Getenv("FAKE_ENV"), leaseEnv())
	clk, notes, err := clock.FromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer clk.Stop()
	for _, note := range notes {
		fmt.Fprintln(os.Stderr, note)
	}
	bootUntil := time.Now().Add(envMs("LEASE_BOOT_WAIT_MS"))
	var unavailableAt time.Time // zero: never
	if mode == "sleep" {
		select {}
	}
	if mode == "spawn-child" {
		spawnChild()
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	self, nextID := "", int64(0)
	for in.Scan() {
		var m message
		var b body
		if json.Unmarshal(in.Bytes(), &m) != nil || json.Unmarshal(m.Body, &b) != nil {
			fmt.Fprintf(os.Stderr, "bad input %q\n", in.Text())
			continue
		}
		fmt.Fprintf(os.Stderr, "got %s from %s\n", b.Type, m.Src)
		if mode == "silent" {
			continue
		}
		nextID++
		reply := map[string]any{"in_reply_to": b.MsgID, "msg_id": nextID}
		switch b.Type {
		case "init":
			self = b.Node
			if ms, ok := strings.CutPrefix(mode, "lease-unavailable-after="); ok {
				n, _ := strconv.Atoi(ms)
				unavailableAt = time.Now().Add(time.Duration(n) * time.Millisecond)
			}
			switch mode {
			case "init-error":
				reply["type"], reply["code"], reply["text"] = "error", 13, "cannot start"
			case "init-wrong-type":
				reply["type"] = "echo_ok"
			default:
				reply["type"] = "init_ok"
			}
		case "echo":
			if handleSpecial(mode, self, m) {
				continue
			}
			reply["type"], reply["echo"] = "echo_ok", b.Echo
			if mode == "wrong-echo" {
				reply["echo"] = "something else"
			}
		case "lease_grant", "lease_renew", "lease_check", "lease_release":
			now := time.Now()
			if now.Before(bootUntil) || (!unavailableAt.IsZero() && !now.Before(unavailableAt)) {
				reply["type"], reply["code"], reply["text"] = "error", 11, "not serving now"
				break
			}
			leaseOp(b, reply)
		default:
			reply["type"], reply["code"], reply["text"] = "error", 10, "unsupported"
		}
		send(self, m.Src, reply)
	}
}

// handleSpecial performs the bad-line and exit modes on the first echo.
func handleSpecial(mode, self string, m message) bool {
	if kind, ok := strings.CutPrefix(mode, "bad="); ok {
		out.WriteString(badLine(kind, self, m.Src) + "\n")
		out.Flush()
		return true
	}
	if code, ok := strings.CutPrefix(mode, "exit-after-init="); ok {
		n, _ := strconv.Atoi(code)
		send(self, m.Src, map[string]any{"type": "last words on stdout"})
		fmt.Fprintln(os.Stderr, "last words on stderr")
		os.Exit(n)
	}
	return false
}

// badLine is one line Maelstrom rejects, of the given kind.
func badLine(kind, self, client string) string {
	ok := fmt.Sprintf(`"src":%q,"dest":%q`, self, client)
	switch kind {
	case "nonjson":
		return "DEBUG: this is a log line"
	case "blank":
		return ""
	case "array":
		return `[1,2,3]`
	case "nonobject-body":
		return "{" + ok + `,"body":"hello"}`
	case "missing-src":
		return fmt.Sprintf(`{"dest":%q,"body":{}}`, client)
	case "missing-dest":
		return fmt.Sprintf(`{"src":%q,"body":{}}`, self)
	case "missing-body":
		return "{" + ok + "}"
	case "extra-key":
		return "{" + ok + `,"body":{},"trace":1}`
	case "float-id":
		return "{" + ok + `,"body":{},"id":1.5}`
	case "unknown-src":
		return fmt.Sprintf(`{"src":"n99","dest":%q,"body":{}}`, client)
	case "unknown-dest":
		return fmt.Sprintf(`{"src":%q,"dest":"n99","body":{}}`, self)
	case "closed-client":
		return fmt.Sprintf(`{"src":%q,"dest":"c0","body":{"type":"late"}}`, self)
	}
	return "unknown kind " + kind
}

// leaseEnv lists the LEASE_* variables that are set, for the start line.
func leaseEnv() string {
	var b strings.Builder
	for _, name := range []string{"LEASE_MS", "LEASE_MAX_MS", "LEASE_BOOT_WAIT_MS"} {
		if v, ok := os.LookupEnv(name); ok {
			fmt.Fprintf(&b, " %s=%s", name, v)
		}
	}
	return b.String()
}

// envMs reads a millisecond count from the environment (0 if unset).
func envMs(name string) time.Duration {
	n, _ := strconv.Atoi(os.Getenv(name))
	return time.Duration(n) * time.Millisecond
}

func send(src, dest string, b map[string]any) {
	raw, _ := json.Marshal(map[string]any{"src": src, "dest": dest, "body": b})
	out.Write(raw)
	out.WriteString("\n")
	out.Flush()
}

func spawnChild() {
	self, _ := os.Executable()
	cmd := exec.Command(self, "sleep")
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "spawn failed:", err)
		os.Exit(3)
	}
	fmt.Fprintf(os.Stderr, "child-pid %d\n", cmd.Process.Pid)
}

// lease is one chunk's state in this process's table: the holder's
// leases by token. The chunk is held while one of them is live, so a
// shorter renewal never shrinks what the holder was told about, and a
// release ends only the lease its token names.
type lease struct {
	holder  string
	expires map[int64]time.Time
}

// end is when the holder's last lease ends.
func (l *lease) end() time.Time {
	var end time.Time
	for _, e := range l.expires {
		if e.After(end) {
			end = e
		}
	}
	return end
}

var (
	leases    = map[string]*lease{}
	lastToken int64 // tokens grow across all chunks, so they fence
)

// leaseOp answers a lease request from the local table alone.
func leaseOp(b body, reply map[string]any) {
	now := time.Now()
	l := leases[b.Chunk]
	live := l != nil && now.Before(l.end())
	remaining := func(until time.Time) int64 { return max(0, int64(until.Sub(now)/time.Millisecond)) }
	switch b.Type {
	case "lease_grant", "lease_renew":
		if live && l.holder != b.Server {
			if b.Type == "lease_renew" {
				reply["type"], reply["code"], reply["text"] = "error", 22, "held by "+l.holder
				return
			}
			reply["type"], reply["chunk_handle"], reply["primary"], reply["expires_in_ms"] = "lease_grant_ok", b.Chunk, l.holder, remaining(l.end())
			return
		}
		if !live || l.holder != b.Server {
			l = &lease{holder: b.Server, expires: map[int64]time.Time{}}
			leases[b.Chunk] = l
		}
		lastToken++
		expiry := now.Add(time.Duration(b.LeaseMs) * time.Millisecond)
		l.expires[lastToken] = expiry
		reply["token"] = lastToken
		if b.Type == "lease_renew" {
			reply["type"], reply["new_expires_in_ms"] = "lease_renew_ok", remaining(expiry)
			return
		}
		reply["type"], reply["chunk_handle"], reply["primary"], reply["expires_in_ms"] = "lease_grant_ok", b.Chunk, b.Server, remaining(expiry)
	case "lease_check":
		reply["type"], reply["primary"], reply["remaining_ms"], reply["expired"] = "lease_check_ok", nil, 0, true
		if l != nil {
			reply["primary"], reply["remaining_ms"], reply["expired"] = l.holder, remaining(l.end()), !live
		}
	case "lease_release":
		if b.Token == nil {
			reply["type"], reply["code"], reply["text"] = "error", 12, "lease_release needs the token of the lease to end"
			return
		}
		if live && l.holder == b.Server {
			if e, ok := l.expires[*b.Token]; ok && e.After(now) {
				l.expires[*b.Token] = now
			}
		}
		reply["type"], reply["chunk_handle"] = "lease_release_ok", b.Chunk
	}
}
