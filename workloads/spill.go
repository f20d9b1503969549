package workloads

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
)

// Spill files hold a history's client ops split by key (the lease
// workload's chunk) between the pass that reads the history and the
// goroutines that check one shard of keys each. A record is a key and a
// pair in a compact binary form; a shard's records keep the order they
// were written in (the pairs' invoke order).

// Spill sizing: about spillShardBytes of history.jsonl per shard, so one
// shard's ops fit in a few tens of megabytes when decoded, and at most
// maxSpillShards shards, each written through a spillBufferBytes buffer.
const (
	spillShardBytes  = 8 << 20
	maxSpillShards   = 1024
	spillBufferBytes = 16 << 10
)

// spillShards is how many shards a history of historyBytes gets.
func spillShards(historyBytes int64) int {
	return int(min(max(historyBytes/spillShardBytes+1, 1), maxSpillShards))
}

// shardOf is the shard of a key (FNV-1a).
func shardOf(key string, shards int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(shards))
}

// spillWriter appends records to one shard file.
type spillWriter struct {
	f   *os.File
	w   *bufio.Writer
	buf []byte
}

func createSpill(path string) (*spillWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	return &spillWriter{f: f, w: bufio.NewWriterSize(f, spillBufferBytes)}, nil
}

func (s *spillWriter) write(key string, p Pair) error {
	b := appendSpillString(s.buf[:0], key)
	b = appendSpillOp(b, p.Invoke)
	if p.Completion == nil {
		b = append(b, 0)
	} else {
		b = appendSpillOp(append(b, 1), *p.Completion)
	}
	s.buf = b
	_, err := s.w.Write(b)
	return err
}

// close flushes and closes the file; later calls do nothing.
func (s *spillWriter) close() error {
	if s.f == nil {
		return nil
	}
	err := s.w.Flush()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.f = nil
	return err
}

// opTypes codes an op's type in one byte.
var opTypes = []string{Invoke, OK, Fail, Info}

func appendSpillOp(b []byte, op Op) []byte {
	b = binary.AppendUvarint(b, uint64(op.Index))
	b = binary.AppendVarint(b, op.Time)
	b = binary.AppendVarint(b, int64(op.Process.ID))
	t := 0
	for i, name := range opTypes {
		if op.Type == name {
			t = i
		}
	}
	b = append(b, byte(t))
	b = appendSpillString(b, op.F)
	b = appendSpillString(b, op.Node)
	b = appendSpillString(b, string(op.Value))
	return appendSpillString(b, op.Error)
}

func appendSpillString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// spillRecord is one decoded record.
type spillRecord struct {
	key  string
	pair Pair
}

var errSpillCorrupt = errors.New("spill: corrupt record")

// readSpill decodes a whole shard file. Values point into the file's
// bytes, which live as long as the records do.
func readSpill(path string) ([]spillRecord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	d := spillDecoder{b: data}
	var out []spillRecord
	for len(d.b) > 0 && d.err == nil {
		r := spillRecord{key: d.str()}
		r.pair.Invoke = d.op()
		if d.byte() == 1 {
			c := d.op()
			r.pair.Completion = &c
		}
		out = append(out, r)
	}
	return out, d.err
}

// spillDecoder reads records from a byte slice; the first error sticks.
type spillDecoder struct {
	b   []byte
	err error
}

func (d *spillDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *spillDecoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *spillDecoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *spillDecoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

func (d *spillDecoder) str() string { return internOpString(d.bytes()) }

func (d *spillDecoder) op() Op {
	op := Op{Index: int(d.uvarint()), Time: d.varint(), Process: Process{ID: int(d.varint())}}
	if t := int(d.byte()); t < len(opTypes) {
		op.Type = opTypes[t]
	} else {
		d.fail()
	}
	op.F, op.Node = d.str(), d.str()
	if v := d.bytes(); len(v) > 0 {
		op.Value = json.RawMessage(v)
	}
	op.Error = d.str()
	return op
}

func (d *spillDecoder) fail() {
	if d.err == nil {
		d.err = errSpillCorrupt
	}
	d.b = nil
}

// spillDir makes the scratch directory of an analysis: inside dir, or in
// the system's temporary directory when dir is "".
func spillDir(dir, name string) (string, error) {
	if dir == "" {
		return os.MkdirTemp("", name+"-*")
	}
	path := filepath.Join(dir, "."+name)
	if err := os.RemoveAll(path); err != nil {
		return "", err
	}
	return path, os.Mkdir(path, 0o755)
}
