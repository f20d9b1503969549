package maelstrom

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// readAll runs the frame reader over input and returns a short summary of
// every message ("src>dest type id") and the log lines.
func readAll(t testing.TB, input string) (got []string, logs []string) {
	t.Helper()
	return readAllFrom(t, strings.NewReader(input), DefaultMaxLineBytes)
}

// readAllFrom is readAll from any reader, with a line limit; a refused
// line shows as "refused src>dest type id: text".
func readAllFrom(t testing.TB, in io.Reader, maxLine int) (got []string, logs []string) {
	t.Helper()
	r := newFrameReader(in, func(format string, args ...any) {
		logs = append(logs, fmt.Sprintf(format, args...))
	}, maxLine)
	for {
		m, err := r.next()
		if err == io.EOF {
			return got, logs
		}
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		if m.refusal != nil {
			got = append(got, "refused "+summary(m)+": "+m.refusal.Text)
			continue
		}
		got = append(got, summary(m))
	}
}

func summary(m Message) string { return fmt.Sprintf("%s>%s %s %d", m.Src, m.Dest, m.Type, m.MsgID) }

// msg is a valid one-line request from c1 with the given msg_id.
func msg(id int) string {
	return fmt.Sprintf(`{"src":"c1","dest":"n1","body":{"type":"echo","echo":"e%d","msg_id":%d}}`, id, id)
}

func want(ids ...int) []string {
	var out []string
	for _, id := range ids {
		out = append(out, fmt.Sprintf("c1>n1 echo %d", id))
	}
	return out
}

const pretty = `{
  "src": "c2",
  "dest": "n1",
  "body": {
    "type": "read",
    "items": [
      {"a": 1},
      {"src": "x"}
    ],
    "msg_id": 40
  }
}`

func TestFrameReader(t *testing.T) {
	long := strings.Repeat("x", 1<<20+17)
	tests := []struct {
		name  string
		input string
		want  []string
		logs  int // how many lines must be reported as skipped
	}{
		{"lines", msg(1) + "\n" + msg(2) + "\n", want(1, 2), 0},
		{"no final newline", msg(1) + "\n" + msg(2), want(1, 2), 0},
		{"blank lines and CRLF", "\n\r\n" + msg(1) + "\r\n   \n" + msg(2) + "\r\n", want(1, 2), 0},
		{"not JSON", "hello\n" + msg(1) + "\n", want(1), 1},
		{"not an object", "[1,2]\n42\n\"s\"\n" + msg(1) + "\n", want(1), 3},
		{"bad envelope", `{"src":"c1","body":{}}` + "\n" + `{"src":"c1","dest":"n1","body":7}` + "\n" + msg(1) + "\n", want(1), 2},
		{"ill-typed msg_id", `{"src":"c1","dest":"n1","body":{"type":"echo","msg_id":"3"}}` + "\n" + msg(1) + "\n", want(1), 1},
		{"truncated line", msg(1)[:30] + "\n" + msg(2) + "\n", want(2), 1},
		{"truncated inside an array", `{"src":"c1","dest":"n1","body":{"type":"x","v":[` + "\n" + msg(2) + "\n" + msg(3) + "\n", want(2, 3), 1},
		{"truncated inside an object value", `{"src":"c1","dest":"n1","body":` + "\n" + msg(2) + "\n", want(2), 1},
		{"truncated inside a string", `{"src":"c1","dest":"n1","body":{"type":"ab` + "\n" + msg(2) + "\n", want(2), 1},
		{"two objects on a line", msg(1) + msg(2) + "\n" + msg(3) + "\n", want(3), 1},
		{"trailing garbage", msg(1) + " x\n" + msg(3) + "\n", want(3), 1},
		{"pretty-printed object", pretty + "\n" + msg(1) + "\n", []string{"c2>n1 read 40", want(1)[0]}, 0},
		{"pretty-printed, indented, no final newline", msg(1) + "\n" + strings.ReplaceAll(pretty, "\n", "\n\t"), []string{want(1)[0], "c2>n1 read 40"}, 0},
		{"garbage then pretty-printed", "{ oops\n" + pretty + "\n", []string{"c2>n1 read 40"}, 1},
		{"open brace alone then a message", "{\n" + msg(1) + "\n", want(1), 1},
		{"input ends inside an object", msg(1) + "\n{\n  \"src\": \"c1\",\n", want(1), 2},
		{"pretty-printed but invalid envelope", "{\n  \"src\": \"c1\"\n}\n" + msg(1) + "\n", want(1), 1},
		{"1 MiB line", `{"src":"c1","dest":"n1","body":{"type":"echo","echo":"` + long + `","msg_id":5}}` + "\n" + msg(6) + "\n", want(5, 6), 0},
		{"1 MiB garbage line", "{" + long + "\n" + msg(6) + "\n", want(6), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, logs := readAll(t, tc.input)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("messages\n got %q\nwant %q\nlogs %q", got, tc.want, logs)
			}
			if len(logs) != tc.logs {
				t.Fatalf("got %d log lines, want %d: %q", len(logs), tc.logs, logs)
			}
			for _, l := range logs {
				if len(l) > 400 {
					t.Fatalf("log line of %d bytes: input must be clipped in logs", len(l))
				}
			}
		})
	}
}

// TestFrameReaderResyncRandom appends a valid line to random byte soups made
// of JSON fragments and checks that it is always the last message read.
func TestFrameReaderResyncRandom(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	pieces := []string{"{", "}", "[", "]", `"`, `\`, ":", ",", "\n", " ", `"src"`, `"c1"`, "1", "null", msg(9), pretty}
	for i := range 2000 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		garbage := []byte(b.String())
		checkResync(t, fmt.Sprintf("case %d seed %d", i, seed), garbage)
		maxLine := len(msg(777)) + rng.IntN(len(pretty))
		checkResyncMax(t, fmt.Sprintf("case %d seed %d limit %d", i, seed, maxLine), garbage, maxLine)
	}
}

// checkResync is the resynchronisation property: whatever precedes it, a
// complete message on its own line is read as the last message, and read
// without consuming any input after it (under Maelstrom no end of input
// comes to flush a pending guess).
func checkResync(t *testing.T, name string, garbage []byte) {
	t.Helper()
	checkResyncMax(t, name, garbage, DefaultMaxLineBytes)
}

// checkResyncMax is checkResync with a line limit (at least the final
// line's length).
func checkResyncMax(t *testing.T, name string, garbage []byte, maxLine int) {
	t.Helper()
	input := string(garbage) + "\n" + msg(777) + "\n"
	src := &endReader{data: []byte(input)}
	r := newFrameReader(src, func(string, ...any) {}, maxLine)
	var got []string
	for {
		m, err := r.next()
		if err == io.EOF {
			break
		}
		got = append(got, summary(m))
		if got[len(got)-1] == want(777)[0] && src.pastEnd {
			t.Fatalf("%s: input %q: the final line was only read after asking for more input", name, input)
		}
	}
	if len(got) == 0 || got[len(got)-1] != want(777)[0] {
		t.Fatalf("%s: input %q: last message is not the final valid line; got %q", name, input, got)
	}
}

// endReader serves data and records any attempt to read beyond it.
type endReader struct {
	data    []byte
	pastEnd bool
}

func (r *endReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		r.pastEnd = true
		return 0, io.EOF
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func FuzzFrameReader(f *testing.F) {
	f.Add([]byte(msg(1)))
	f.Add([]byte(pretty))
	f.Add([]byte(`{"src":"c1","dest":"n1","body":{"type":"x","v":[`))
	f.Add([]byte("{\n{\n[\n\"\n"))
	f.Add([]byte(msg(1)[:20] + "\n" + msg(2)))
	f.Fuzz(func(t *testing.T, garbage []byte) {
		checkResync(t, "fuzz", garbage)
	})
}
