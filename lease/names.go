package lease

import "strings"

// Server names. An acceptor record names the server of its latest lease
// by a number (4 bytes beside the record) rather than a string (a 16-byte
// header and the bytes), and that number is an index into a nameTable.
// Names are counted, so the table follows the live records, not every
// server ever seen: each chunk record holds one reference to its server
// (chunkTable.put and the sweep keep the count), and the call into the
// Node that read a name from a message holds one until the call returns
// (hold), so an id it compares or stores stays valid meanwhile. A name no
// record references any more is forgotten at once, and its id reused. When
// fewer than half the ids of the table's peak are in use, the table is
// compacted and every record renumbered (chunkTable.renumber), so its
// slices and map shrink back as the chunk table's do.

// noServer is the id of "no server" (a record that never accepted).
const noServer = 0

// nameTable interns server names with reference counts.
type nameTable struct {
	names []string          // by id; "" at noServer and at free ids
	refs  []uint32          // references by id; 0 at free ids
	index map[string]uint32 // name -> id
	free  []uint32          // ids to reuse before the slices grow
	call  []uint32          // references held until the current call ends
	peak  int               // names in use when last compacted, or at most
}

func newNameTable() nameTable {
	return nameTable{names: []string{""}, refs: []uint32{0}, index: make(map[string]uint32)}
}

// len is the number of names in use.
func (t *nameTable) len() int { return len(t.index) }

// name is the server named by id ("" for noServer).
func (t *nameTable) name(id uint32) string { return t.names[id] }

// lookup returns s's id, and false when no record or call uses s.
func (t *nameTable) lookup(s string) (uint32, bool) {
	id, ok := t.index[s]
	return id, ok
}

// hold returns s's id, adding s if it is new, with a reference that lasts
// until endCall. A name read from a message is held this way, so the id
// stays s's while the call compares or stores it; whatever stores it
// takes a reference of its own.
func (t *nameTable) hold(s string) uint32 {
	id, ok := t.index[s]
	if !ok {
		id = t.add(s)
	}
	t.refs[id]++
	t.call = append(t.call, id)
	return id
}

// add makes an id for s, with no reference yet.
func (t *nameTable) add(s string) uint32 {
	// A copy, so that the table never keeps alive a larger buffer the
	// name might share (a message's line), only the name's own bytes.
	s = strings.Clone(s)
	var id uint32
	if n := len(t.free); n > 0 {
		id, t.free = t.free[n-1], t.free[:n-1]
		t.names[id] = s
	} else {
		id = uint32(len(t.names))
		t.names, t.refs = append(t.names, s), append(t.refs, 0)
	}
	t.index[s] = id
	t.peak = max(t.peak, len(t.index))
	return id
}

// endCall drops the references hold took during the call.
func (t *nameTable) endCall() {
	for _, id := range t.call {
		t.release(id)
	}
	t.call = t.call[:0]
}

// retain adds a reference to id (noServer is not counted).
func (t *nameTable) retain(id uint32) {
	if id != noServer {
		t.refs[id]++
	}
}

// release drops a reference to id, and the name with its last one.
func (t *nameTable) release(id uint32) {
	if id == noServer {
		return
	}
	if t.refs[id] == 0 {
		panic("lease: server name released more often than retained")
	}
	t.refs[id]--
	if t.refs[id] == 0 {
		delete(t.index, t.names[id])
		t.names[id] = ""
		t.free = append(t.free, id)
	}
}

// swap moves a reference from id old to id new.
func (t *nameTable) swap(old, new uint32) {
	if old != new {
		t.retain(new)
		t.release(old)
	}
}

// sparse reports whether fewer than half the ids of the table's peak are
// in use: then compact gives memory back (Go maps never shrink).
func (t *nameTable) sparse() bool { return belowHalf(len(t.index), t.peak) }

// belowHalf reports whether n is fewer than half of peak, exactly: the
// rule by which the name and chunk tables give memory back. Rounded down
// (n < peak/2), a table that peaked at one entry and then lost it (0 <
// 0) kept it for ever (TestAnEmptiedNameTableGivesItsIdsBack).
func belowHalf(n, peak int) bool { return 2*n < peak }

// compact rebuilds the table with the names in use numbered densely from
// 1, and returns the renumbering (old id -> new id; noServer and free ids
// map to noServer). The caller must renumber every id it keeps.
func (t *nameTable) compact() []uint32 {
	remap := make([]uint32, len(t.names))
	fresh := nameTable{
		names: make([]string, 1, len(t.index)+1),
		refs:  make([]uint32, 1, len(t.index)+1),
		index: make(map[string]uint32, len(t.index)),
		call:  make([]uint32, 0, len(t.call)),
	}
	for id, s := range t.names {
		if t.refs[id] == 0 {
			continue
		}
		remap[id] = uint32(len(fresh.names))
		fresh.index[s] = remap[id]
		fresh.names, fresh.refs = append(fresh.names, s), append(fresh.refs, t.refs[id])
	}
	for _, id := range t.call {
		fresh.call = append(fresh.call, remap[id])
	}
	fresh.peak = len(fresh.index)
	*t = fresh
	return remap
}
