package maelstrom

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
// Lines are limited to maxLine bytes (WithMaxLineBytes), far above any
// normal message: the 64 KiB bufio.Scanner limit would end a node on a
// large gossip message, and no limit at all lets one line without a
// newline take all the memory there is. A longer line is read in pieces of
// the 64 KiB buffer and discarded up to its newline, keeping only its
// first maxLine bytes, from which the envelope is read as far as it goes
// (salvage.go): with a src and a msg_id it is refused with error 12 naming
// the limit, else logged and skipped. A message printed over several
// lines is held to the same limit in all. A line that encoding/json
// refuses only for nesting deeper than it reads is refused the same way.
// Other skipped input is reported on stderr with its line number, never
// answered: it has no trustworthy src to answer to.

// inputLine is one raw input line, '\n' included, with its 1-based number.
// A line over the limit has over set and only its first maxLine bytes in b.
type inputLine struct {
	no   int
	b    []byte
	over bool
}

// frameReader turns the input stream into Messages. Only the reader
// goroutine uses it.
type frameReader struct {
	br      *bufio.Reader
	maxLine int         // the longest line read, in bytes without its newline
	back    []inputLine // lines to read again before br (rule 3)
	lineNo  int
	eof     bool
	logf    func(format string, args ...any)
}

func newFrameReader(in io.Reader, logf func(string, ...any), maxLine int) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(in, 64<<10), maxLine: maxLine, logf: logf}
}

// next returns the next well-formed message, or io.EOF at end of input.
// Envelope or header errors are logged here and the message skipped.
func (r *frameReader) next() (Message, error) {
	for {
		ln, ok := r.nextLine()
		if !ok {
			return Message{}, io.EOF
		}
		if ln.over {
			if m, ok := r.refuse(ln, fmt.Sprintf("its line is longer than this node's limit of %d bytes", r.maxLine)); ok {
				return m, nil
			}
			continue
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
		case nestsDeeper(ln.b, maxJSONDepth):
			if m, ok := r.refuse(ln, fmt.Sprintf("its JSON nests deeper than %d levels, the most this node reads", maxJSONDepth)); ok {
				return m, nil
			}
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
	b, over, err := r.readLine()
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
	return inputLine{no: r.lineNo, b: b, over: over}, true
}

// readLine reads one line, '\n' included, holding at most maxLine+1 bytes
// of it: a line longer than maxLine (newline not counted) comes back cut
// to its first maxLine bytes with over set, the rest having been read
// piece by piece and discarded up to its newline (or the end of input).
func (r *frameReader) readLine() (line []byte, over bool, err error) {
	for {
		frag, err := r.br.ReadSlice('\n')
		keep := min(len(frag), r.maxLine+1-len(line))
		line = append(line, frag[:keep]...)
		over = over || keep < len(frag)
		if err != bufio.ErrBufferFull {
			n := len(line)
			if n > 0 && line[n-1] == '\n' {
				n--
			}
			if over || n > r.maxLine {
				return line[:r.maxLine], true, err
			}
			return line, false, err
		}
	}
}

// refuse answers a line the node will not read (why says what is wrong)
// when salvage finds its src and msg_id, as a Message the loop refuses
// with error 12; otherwise it logs and skips the line.
func (r *frameReader) refuse(ln inputLine, why string) (Message, bool) {
	m, ok := salvage(ln.b)
	if !ok {
		r.logf("input line %d skipped: %s, and no src and msg_id could be read before that to answer: %s",
			ln.no, why, clip(bytes.TrimSpace(ln.b), 80))
		return Message{}, false
	}
	r.logf("input line %d refused: %s; answering %s with error 12", ln.no, why, describe(m))
	m.refusal = Errorf(CodeMalformedRequest, "%s refused unread: %s", typeName(m), why)
	return m, true
}

// pushBack queues lines to be read again, ahead of anything not yet read.
func (r *frameReader) pushBack(lines []inputLine) {
	if len(lines) == 0 {
		return
	}
	r.back = append(append([]inputLine(nil), lines...), r.back...)
}

// errStandalone stops a multi-line attempt when a complete message line
// arrives (rule 1 beats rule 2), or a line over the limit (it is refused
// on its own).
var errStandalone = errors.New("a later line is a complete message by itself")

// multiLine applies rule 2 from first, and rule 3 when it fails.
func (r *frameReader) multiLine(first inputLine) (Message, bool) {
	feed := &lineFeed{r: r, lines: []inputLine{first}, cur: first.b, served: len(first.b)}
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
	served     int    // bytes of the lines served so far
	standalone *inputLine
}

func (f *lineFeed) Read(p []byte) (int, error) {
	for len(f.cur) == 0 {
		ln, ok := f.r.nextLine()
		if !ok {
			return 0, io.EOF
		}
		if ln.over {
			f.standalone = &ln
			return 0, errStandalone
		}
		if f.served += len(ln.b); f.served > f.r.maxLine {
			f.standalone = &ln
			return 0, fmt.Errorf("a message over several lines would be longer than this node's line limit of %d bytes", f.r.maxLine)
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
