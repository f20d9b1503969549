package history

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
)

// Spill files hold a history's client ops split by key (the lease
// workload's chunk) between the pass that reads the history and the
// goroutines that check one shard of keys each. A record is a key and a
// pair in a compact binary form (Write, ReadSpill), or a key and a byte
// string (WriteBytes, OpenByteRecords: a checker's findings per key,
// merged later); a file's records keep the order they were written in.

// Spill sizing: about spillShardBytes of history.jsonl per shard, so one
// shard's ops fit in a few megabytes when decoded (each goroutine of the
// analysis holds one; 8 MiB shards cost a 120 s run at 2000 ops/s 50 MiB
// more peak memory, for no speed), and at most
// maxSpillShards shards, each written and read through a spillBufferBytes
// buffer.
const (
	spillShardBytes  = 2 << 20
	maxSpillShards   = 1024
	spillBufferBytes = 16 << 10
)

// SpillShards is how many shards a history of historyBytes gets.
func SpillShards(historyBytes int64) int {
	return int(min(max(historyBytes/spillShardBytes+1, 1), maxSpillShards))
}

// ShardOf is the shard of a key (FNV-1a).
func ShardOf(key string, shards int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(shards))
}

// SpillWriter appends records to one spill file.
type SpillWriter struct {
	f   *os.File
	w   *bufio.Writer
	buf []byte
}

// CreateSpill creates the spill file at path.
func CreateSpill(path string) (*SpillWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	return &SpillWriter{f: f, w: bufio.NewWriterSize(f, spillBufferBytes)}, nil
}

// Write appends a pair filed under key.
func (s *SpillWriter) Write(key string, p Pair) error {
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

// WriteBytes appends a byte record filed under key.
func (s *SpillWriter) WriteBytes(key string, data []byte) error {
	b := appendSpillString(s.buf[:0], key)
	b = appendSpillString(b, string(data))
	s.buf = b
	_, err := s.w.Write(b)
	return err
}

// Close flushes and closes the file; later calls do nothing.
func (s *SpillWriter) Close() error {
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

// SpillRecord is one decoded pair record.
type SpillRecord struct {
	Key  string
	Pair Pair
}

var errSpillCorrupt = errors.New("spill: corrupt record")

// ReadSpill decodes a whole file of pair records. Values point into the
// file's bytes, which live as long as the records do.
func ReadSpill(path string) ([]SpillRecord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	d := spillDecoder{b: data, strings: &interner{}}
	var out []SpillRecord
	for len(d.b) > 0 && d.err == nil {
		r := SpillRecord{Key: d.str()}
		r.Pair.Invoke = d.op()
		if d.byte() == 1 {
			c := d.op()
			r.Pair.Completion = &c
		}
		out = append(out, r)
	}
	return out, d.err
}

// spillDecoder reads records from a byte slice; the first error sticks.
type spillDecoder struct {
	b       []byte
	err     error
	strings *interner
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

func (d *spillDecoder) str() string { return d.strings.intern(d.bytes()) }

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

// SpillDir makes the scratch directory of an analysis: inside dir, or in
// the system's temporary directory when dir is "".
func SpillDir(dir, name string) (string, error) {
	if dir == "" {
		return os.MkdirTemp("", name+"-*")
	}
	path := filepath.Join(dir, "."+name)
	if err := os.RemoveAll(path); err != nil {
		return "", err
	}
	return path, os.Mkdir(path, 0o755)
}

// ByteRecords reads a file of byte records (WriteBytes) one at a time.
type ByteRecords struct {
	f         *os.File
	r         *bufio.Reader
	key, data []byte
	err       error
}

// OpenByteRecords opens the file of byte records at path.
func OpenByteRecords(path string) (*ByteRecords, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	return &ByteRecords{f: f, r: bufio.NewReaderSize(f, spillBufferBytes)}, nil
}

// Next reads the next record; false at the end or on an error (Err).
func (b *ByteRecords) Next() bool {
	read := func() []byte {
		n, err := binary.ReadUvarint(b.r)
		if err != nil {
			b.err = err
			return nil
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(b.r, buf); err != nil {
			b.err = err
			return nil
		}
		return buf
	}
	b.key = read()
	if b.err != nil {
		if b.err == io.EOF {
			b.err = nil
		}
		return false
	}
	b.data = read()
	return b.err == nil
}

// Key and Data are the record Next read.
func (b *ByteRecords) Key() []byte  { return b.key }
func (b *ByteRecords) Data() []byte { return b.data }

// Err is the error that stopped Next, if any.
func (b *ByteRecords) Err() error { return b.err }

// Close closes the file.
func (b *ByteRecords) Close() error { return b.f.Close() }
