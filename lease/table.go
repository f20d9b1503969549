package lease

// chunkTable holds every chunk's acceptor state and the server names its
// records use. A Go map of string to a 24-byte struct costs up to 100
// bytes a chunk at some sizes (the table splits near 44% full), so the map
// holds only a 4-byte slot number and the states live in a slab: about 85
// bytes an idle chunk at worst, 65 at best. Freed slots are reused; when
// reclaiming leaves the table less than half full, map and slab are
// rebuilt so memory follows the live leases. Each record holds a reference
// to its server's name (names.go), taken and dropped here, so a name lives
// exactly as long as some record names it.
type chunkTable struct {
	index map[string]uint32
	slab  []acceptor
	free  []uint32
	peak  int // entries when the map was last rebuilt, or at most
	names nameTable
}

func newChunkTable() chunkTable {
	return chunkTable{index: make(map[string]uint32), names: newNameTable()}
}

// len is the number of chunks held.
func (t *chunkTable) len() int { return len(t.index) }

// get returns a copy of chunk's state and whether it exists.
func (t *chunkTable) get(chunk string) (acceptor, bool) {
	i, ok := t.index[chunk]
	if !ok {
		return acceptor{}, false
	}
	return t.slab[i], true
}

// put stores chunk's state, moving its name reference to the record's
// server.
func (t *chunkTable) put(chunk string, a acceptor) {
	if i, ok := t.index[chunk]; ok {
		t.names.swap(t.slab[i].server(), a.server())
		t.slab[i] = a
		return
	}
	t.names.retain(a.server())
	var i uint32
	if n := len(t.free); n > 0 {
		i, t.free = t.free[n-1], t.free[:n-1]
		t.slab[i] = a
	} else {
		i = uint32(len(t.slab))
		t.slab = append(t.slab, a)
	}
	t.index[chunk] = i
	t.peak = max(t.peak, len(t.index))
}

// each calls f for every chunk with a pointer to its state; f returns
// false to drop the chunk (and its name reference). f must not change the
// record's server.
func (t *chunkTable) each(f func(chunk string, a *acceptor) bool) {
	for chunk, i := range t.index {
		if !f(chunk, &t.slab[i]) {
			t.names.release(t.slab[i].server())
			delete(t.index, chunk)
			t.slab[i] = acceptor{}
			t.free = append(t.free, i)
		}
	}
	switch {
	case belowHalf(len(t.index), t.peak):
		t.rebuild()
	case t.names.sparse():
		t.renumber()
	}
}

// rebuild copies the live entries into a fresh map and slab: Go maps
// never shrink, so this is how reclaimed memory is returned. The names
// are compacted on the way.
func (t *chunkTable) rebuild() {
	remap := t.names.compact()
	index := make(map[string]uint32, len(t.index))
	slab := make([]acceptor, 0, len(t.index))
	for chunk, i := range t.index {
		index[chunk] = uint32(len(slab))
		a := t.slab[i]
		a.setServer(remap[a.server()])
		slab = append(slab, a)
	}
	t.index, t.slab, t.free, t.peak = index, slab, nil, len(index)
}

// renumber compacts the names alone and renames every record to match
// (a free slot names noServer, which stays noServer).
func (t *chunkTable) renumber() {
	remap := t.names.compact()
	for i := range t.slab {
		t.slab[i].setServer(remap[t.slab[i].server()])
	}
}

// setServer names the record's server by id, keeping its idle mark.
func (a *acceptor) setServer(id uint32) { a.meta = a.meta&idleBit | id }
