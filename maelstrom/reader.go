package maelstrom

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Input framing. Maelstrom writes one compact JSON object per line, but a
// person testing by hand may paste a pretty-printed object, and a broken
// producer may write anything. The rules, in order:
//
//  1. A line that is by itself a complete message is a message. This keeps
//     the common case one parse, and is what makes resynchronisation
//     immediate: no earlier garbage can swallow a well-formed line.
//  2. A line that starts with '{' but is not complete JSON may begin a
//     message printed over several lines: following lines are fed to an
//     incremental JSON decoder until the object closes (a message), the
//     JSON grammar breaks, input ends, or a line satisfying rule 1 arrives.
//  3. When rule 2 fails, only its first line is discarded (logged); the
//     lines after it are read again from rule 1, so a failed guess never
//     loses a later message.
//  4. Blank lines are ignored; anything else is logged and skipped.
//
// Lines have no length limit (bufio.Reader.ReadBytes grows as needed): the
// 64 KiB bufio.Scanner limit would otherwise end a node on a large gossip
// message. Skipped input is reported on stderr with its line number, never
// answered: it has no trustworthy src to answer to.

// inputLine is one raw input line, '\n' included, with its 1-based number.
type inputLine struct {
	no int
	b  []byte
}

// frameReader turns the input stream into Messages. Only the reader
// goroutine uses it.
type frameReader struct {
	br     *bufio.Reader
	back   []inputLine // lines to read again before br (rule 3)
	lineNo int
	eof    bool
	logf   func(format string, args ...any)
}

func newFrameReader(in io.Reader, logf func(string, ...any)) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(in, 64<<10), logf: logf}
}

// next returns the next well-formed message, or io.EOF at end of input.
// Envelope or header errors are logged here and the message skipped.
func (r *frameReader) next() (Message, error) {
	for {
		ln, ok := r.nextLine()
		if !ok {
			return Message{}, io.EOF
		}
		if isBlank(ln.b) {
			continue
		}
		m, err := parseMessage(ln.b)
		switch {
		case err == nil:
			return m, nil
		case !errors.Is(err, errNotJSON):
			r.logf("input line %d skipped: %v: %s", ln.no, err, clip(bytes.TrimSpace(ln.b), 80))
		case firstByte(ln.b) != '{':
			r.logf("input line %d skipped: not a JSON object: %s", ln.no, clip(bytes.TrimSpace(ln.b), 80))
		default:
			if m, ok := r.multiLine(ln); ok {
				return m, nil
			}
		}
	}
}

// nextLine returns the next line to consider, pushed-back lines first.
func (r *frameReader) nextLine() (inputLine, bool) {
	if len(r.back) > 0 {
		ln := r.back[0]
		r.back = r.back[1:]
		return ln, true
	}
	if r.eof {
		return inputLine{}, false
	}
	b, err := r.br.ReadBytes('\n')
	if err != nil {
		r.eof = true
		if err != io.EOF {
			r.logf("reading input: %v; treating it as end of input", err)
		}
		if len(b) == 0 {
			return inputLine{}, false
		}
	}
	r.lineNo++
	return inputLine{no: r.lineNo, b: b}, true
}

// pushBack queues lines to be read again, ahead of anything not yet read.
func (r *frameReader) pushBack(lines []inputLine) {
	if len(lines) == 0 {
		return
	}
	r.back = append(append([]inputLine(nil), lines...), r.back...)
}

// errStandalone stops a multi-line attempt when a complete message line
// arrives (rule 1 beats rule 2).
var errStandalone = errors.New("a later line is a complete message by itself")

// multiLine applies rule 2 from first, and rule 3 when it fails.
func (r *frameReader) multiLine(first inputLine) (Message, bool) {
	feed := &lineFeed{r: r, lines: []inputLine{first}, cur: first.b}
	dec := json.NewDecoder(feed)
	var raw json.RawMessage
	err := dec.Decode(&raw)
	if err == nil && !feed.restIsBlank(dec) {
		err = errors.New("more data follows the object on its last line")
	}
	if err == nil {
		m, perr := parseMessage(raw)
		if perr != nil {
			last := feed.lines[len(feed.lines)-1].no
			r.logf("input lines %d-%d skipped: %v", first.no, last, perr)
			return Message{}, false
		}
		return m, true
	}
	if err == io.ErrUnexpectedEOF {
		err = errors.New("input ended inside the object")
	}
	r.logf("input line %d skipped: not a complete JSON object (%v): %s", first.no, err, clip(bytes.TrimSpace(first.b), 80))
	rest := feed.lines[1:]
	if feed.standalone != nil {
		rest = append(rest, *feed.standalone)
	}
	r.pushBack(rest)
	return Message{}, false
}

// lineFeed serves whole lines to a json.Decoder, one line per refill, so the
// decoder never reads past the line on which the object closes, and records
// which lines it served so they can be read again.
type lineFeed struct {
	r          *frameReader
	lines      []inputLine
	cur        []byte // unserved rest of the last line in lines
	standalone *inputLine
}

func (f *lineFeed) Read(p []byte) (int, error) {
	for len(f.cur) == 0 {
		ln, ok := f.r.nextLine()
		if !ok {
			return 0, io.EOF
		}
		if firstByte(ln.b) == '{' {
			if _, err := parseMessage(ln.b); err == nil {
				f.standalone = &ln
				return 0, errStandalone
			}
		}
		f.lines = append(f.lines, ln)
		f.cur = ln.b
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	return n, nil
}

// restIsBlank reports whether nothing but whitespace follows the decoded
// object on its line.
func (f *lineFeed) restIsBlank(dec *json.Decoder) bool {
	buffered, _ := io.ReadAll(dec.Buffered())
	return isBlank(buffered) && isBlank(f.cur)
}

func isBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// firstByte is the first non-whitespace byte, or 0.
func firstByte(b []byte) byte {
	if t := bytes.TrimSpace(b); len(t) > 0 {
		return t[0]
	}
	return 0
}
