package maelstrom

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"testing/synctest"
)

// sized is a one-line echo request from c1 with msg_id id, padded to
// exactly n bytes (no newline).
func sized(t testing.TB, id, n int) string {
	t.Helper()
	head := fmt.Sprintf(`{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":%d,"echo":"`, id)
	const tail = `"}}`
	pad := n - len(head) - len(tail)
	if pad < 0 {
		t.Fatalf("a request of %d bytes cannot hold msg_id %d", n, id)
	}
	return head + strings.Repeat("x", pad) + tail
}

const tooLong = `"echo" refused unread: its line is longer than this node's limit of %d bytes`

func refused(id, limit int) string {
	return fmt.Sprintf("refused c1>n1 echo %d: "+tooLong, id, limit)
}

// TestLineLimit: lines up to the limit are read; longer ones are refused
// when src and msg_id come before the limit, else skipped; either way
// the next line is read. The limit counts bytes before the newline.
func TestLineLimit(t *testing.T) {
	const limit = 200
	lateID := `{"src":"c1","dest":"n1","body":{"type":"echo","echo":"` + strings.Repeat("y", 300) + `","msg_id":7}}`
	lateSrc := `{"body":{"type":"echo","msg_id":7},"dest":"n1","pad":"` + strings.Repeat("y", 300) + `","src":"c1"}`
	reply := `{"src":"c1","dest":"n1","body":{"type":"echo_ok","in_reply_to":3,"echo":"` + strings.Repeat("y", 300) + `"}}`
	cut := `{"src":"c1","dest":"n1","body":{"type":"echo","pad":"` + strings.Repeat("y", limit-60) + `","msg_id":12345678}}`
	prettyLong := "{\n" + `"src":"c1",` + "\n" + `"dest":"n1",` + "\n" + `"body":{"type":"echo","msg_id":8,` + "\n" +
		strings.Repeat(`"k":"`+strings.Repeat("z", 40)+`",`+"\n", 6) + `"e":1}` + "\n}"
	tests := []struct {
		name  string
		input string
		want  []string
		logs  int
	}{
		{"exactly the limit", sized(t, 1, limit) + "\n" + msg(2) + "\n", []string{want(1)[0], want(2)[0]}, 0},
		{"exactly the limit, no final newline", sized(t, 1, limit), want(1), 0},
		{"one byte over", sized(t, 1, limit+1) + "\n" + msg(2) + "\n", []string{refused(1, limit), want(2)[0]}, 1},
		{"one byte over, no final newline", sized(t, 1, limit+1), []string{refused(1, limit)}, 1},
		{"a carriage return counts", sized(t, 1, limit) + "\r\n" + msg(2) + "\n", []string{refused(1, limit), want(2)[0]}, 1},
		{"newline far beyond", sized(t, 1, 100*limit) + "\n" + msg(2) + "\n", []string{refused(1, limit), want(2)[0]}, 1},
		{"several in a row", sized(t, 1, 3*limit) + "\n" + sized(t, 2, limit+1) + "\n" + lateID + "\n" + sized(t, 4, 5*limit) + "\n" + msg(5) + "\n",
			[]string{refused(1, limit), refused(2, limit), refused(4, limit), want(5)[0]}, 4},
		{"msg_id after the limit", lateID + "\n" + msg(2) + "\n", want(2), 1},
		{"src after the limit", lateSrc + "\n" + msg(2) + "\n", want(2), 1},
		{"a reply is never answered", reply + "\n" + msg(2) + "\n", want(2), 1},
		{"msg_id cut by the limit", cut + "\n" + msg(2) + "\n", want(2), 1},
		{"garbage over the limit", strings.Repeat("{[\"", 400) + "\n" + msg(2) + "\n", want(2), 1},
		// Rule 3: only the first line of the failed attempt is discarded;
		// the others are read again, each on its own.
		{"pretty-printed over the limit", prettyLong + "\n" + msg(2) + "\n", want(2), 12},
		{"a long line inside a pretty-printed object", "{\n" + `"src":"c1",` + "\n" + sized(t, 3, 2*limit) + "\n" + msg(2) + "\n",
			[]string{refused(3, limit), want(2)[0]}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, split := range []struct {
				name string
				wrap func(io.Reader) io.Reader
			}{{"whole", func(r io.Reader) io.Reader { return r }}, {"one byte per read", iotest.OneByteReader}, {"half reads", iotest.HalfReader}} {
				got, logs := readAllFrom(t, split.wrap(strings.NewReader(tc.input)), limit)
				if strings.Join(got, "|") != strings.Join(tc.want, "|") {
					t.Fatalf("%s: messages\n got %q\nwant %q\nlogs %q", split.name, got, tc.want, logs)
				}
				if len(logs) != tc.logs {
					t.Fatalf("%s: %d log lines, want %d: %q", split.name, len(logs), tc.logs, logs)
				}
				for _, l := range logs {
					if len(l) > 400 {
						t.Fatalf("log line of %d bytes: input must be clipped in logs", len(l))
					}
				}
			}
		})
	}
}

// TestLineLimitBoundary: for every line length around the limit and every
// read size, a line is read exactly when it is no longer than the limit,
// whatever the pieces the input arrives in.
func TestLineLimitBoundary(t *testing.T) {
	for _, limit := range []int{90, 91, 127, 128} {
		for n := limit - 2; n <= limit+2; n++ {
			input := sized(t, 1, n) + "\n" + msg(2) + "\n"
			first := want(1)[0]
			if n > limit {
				first = refused(1, limit)
			}
			for chunk := 1; chunk <= n+3; chunk++ {
				got, _ := readAllFrom(t, &chunkReader{data: []byte(input), chunk: chunk}, limit)
				if len(got) != 2 || got[0] != first || got[1] != want(2)[0] {
					t.Fatalf("limit %d, line of %d bytes in reads of %d: got %q, want [%q %q]", limit, n, chunk, got, first, want(2)[0])
				}
			}
		}
	}
}

// chunkReader serves data in reads of at most chunk bytes.
type chunkReader struct {
	data  []byte
	chunk int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.chunk)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestLongLineNeverHeld reads a 64 MiB line under a 4 KiB limit and
// counts the bytes allocated meanwhile: the line is discarded as it is
// read, so they stay near the reader's buffer, never near the line.
func TestLongLineNeverHeld(t *testing.T) {
	const lineBytes, limit = 64 << 20, 4096
	head := `{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":1,"echo":"`
	in := io.MultiReader(strings.NewReader(head), &repeatReader{left: lineBytes}, strings.NewReader("\"}}\n"+msg(2)+"\n"))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, _ := readAllFrom(t, in, limit)
	runtime.ReadMemStats(&after)
	if len(got) != 2 || got[0] != refused(1, limit) || got[1] != want(2)[0] {
		t.Fatalf("got %q", got)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("reading a %d MiB line allocated %d KiB; the line must be discarded as it is read", lineBytes>>20, alloc>>10)
	}
}

// repeatReader serves left bytes of 'x', without holding them.
type repeatReader struct{ left int }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.left)
	for i := range p[:n] {
		p[i] = 'x'
	}
	r.left -= n
	return n, nil
}

// TestDeepLine: a line nested deeper than encoding/json reads is refused
// with error 12 when its src and msg_id can be read, wherever they are in
// the line; without them it is skipped; the next line is read either way.
func TestDeepLine(t *testing.T) {
	deep := strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1)
	const deepText = `"echo" refused unread: its JSON nests deeper than 10000 levels, the most this node reads`
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{"msg_id before", `{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":4,"echo":` + deep + `}}`, []string{"refused c1>n1 echo 4: " + deepText}},
		{"msg_id after", `{"src":"c1","dest":"n1","body":{"type":"echo","echo":` + deep + `,"msg_id":4}}`, []string{"refused c1>n1 echo 4: " + deepText}},
		{"no msg_id", `{"src":"c1","dest":"n1","body":{"type":"echo","echo":` + deep + `}}`, nil},
		{"just at the limit", `{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":4,"echo":` +
			strings.Repeat("[", maxJSONDepth-2) + strings.Repeat("]", maxJSONDepth-2) + `}}`, []string{"c1>n1 echo 4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, logs := readAllFrom(t, strings.NewReader(tc.input+"\n"+msg(2)+"\n"), DefaultMaxLineBytes)
			wantAll := append(tc.want, want(2)[0])
			if strings.Join(got, "|") != strings.Join(wantAll, "|") {
				t.Fatalf("messages\n got %q\nwant %q\nlogs %q", got, wantAll, logs)
			}
		})
	}
}

// TestSalvage reads envelopes from prefixes and odd lines.
func TestSalvage(t *testing.T) {
	tests := []struct {
		in   string
		want string // "src dest type msg_id ok"
	}{
		{`{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":5,"echo":"xx`, "c1 n1 echo 5 true"},
		{`{"SRC":"c\u0031","Dest":"n1","body":{"Type":"echo","MSG_ID":5}}`, "c1 n1 echo 5 true"},
		{`{"src":"c1","src":"c2","dest":"n1","body":{"msg_id":5}}`, "c2 n1  5 true"},
		{`{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":5`, "c1 n1 echo 0 false"},
		{`{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":5,`, "c1 n1 echo 5 true"},
		{`{"src":"c1","dest":"n1","body":{"type":"x_ok","in_reply_to":2,"msg_id":5}}`, "c1 n1 x_ok 5 false"},
		{`{"src":"c1","dest":"n1","body":{"msg_id":"5"}}`, "c1 n1  0 false"},
		{`{"src":"c1","dest":"n1","body":{"msg_id":5.0}}`, "c1 n1  0 false"},
		{`{"pad":{"a":["}",{"b":"]"}]},"src":"c1","body":{"msg_id":5}}`, "c1   5 true"},
		{`{"src":"c1","body":{"x":[1,2,{"y":null}],"msg_id":5}}`, "c1   5 true"},
		{`{"src":`, "   0 false"},
		{`[{"src":"c1"}]`, "   0 false"},
		{`{"src":"c1" "dest":"n1","body":{"msg_id":5}}`, "c1   0 false"},
	}
	for _, tc := range tests {
		m, ok := salvage([]byte(tc.in))
		if got := fmt.Sprintf("%s %s %s %d %v", m.Src, m.Dest, m.Type, m.MsgID, ok); got != tc.want {
			t.Errorf("salvage(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRefusedLinesAnswered: through a running node, a line over the limit
// and a line nested too deep are answered with error 12 from the node's
// id (before init: from the address they were sent to), numbered from the
// one counter, and the next request is served.
func TestRefusedLinesAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := startNode(t, echoNode, WithMaxLineBytes(20000))
		tn.send(sized(t, 3, 20001))
		tn.expect(`{"src":"n1","dest":"c1","body":{"type":"error","in_reply_to":3,"code":12,"text":"\"echo\" refused unread: its line is longer than this node's limit of 20000 bytes","msg_id":0}}`)
		tn.send(`{"src":"c0","dest":"n1","body":{"type":"init","node_id":"n1","node_ids":["n1"],"msg_id":1}}`)
		tn.expect(`{"src":"n1","dest":"c0","body":{"type":"init_ok","in_reply_to":1,"msg_id":1}}`)
		tn.send(sized(t, 4, 100000))
		tn.send(`{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":5,"echo":` + strings.Repeat("[", maxJSONDepth+1) + `}}`)
		tn.send(msg(6))
		tn.expect(
			`{"src":"n1","dest":"c1","body":{"type":"error","in_reply_to":4,"code":12,"text":"\"echo\" refused unread: its line is longer than this node's limit of 20000 bytes","msg_id":2}}`,
			`{"src":"n1","dest":"c1","body":{"type":"error","in_reply_to":5,"code":12,"text":"\"echo\" refused unread: its JSON nests deeper than 10000 levels, the most this node reads","msg_id":3}}`,
			`{"src":"n1","dest":"c1","body":{"type":"echo_ok","in_reply_to":6,"echo":"e6","msg_id":4}}`)
		tn.logged("input line 1 refused", "input line 4 refused: its JSON nests deeper", `"echo" msg_id 5 from c1`)
		if err := tn.finish(); err != nil {
			t.Fatal(err)
		}
	})
}
