package lease

// chunkTable holds every chunk's acceptor state. A Go map of string to a
// 24-byte struct costs up to 100 bytes a chunk at some sizes (the table
// splits near 44% full), so the map holds only a 4-byte slot number and
// the states live in a slab: about 85 bytes an idle chunk at worst,
// 65 at best. Freed slots are reused; when reclaiming leaves the table
// less than half full, map and slab are rebuilt so memory follows the
// live leases.
type chunkTable struct {
	index map[string]uint32
	slab  []acceptor
	free  []uint32
	peak  int // entries when the map was last rebuilt, or at most
}

func newChunkTable() chunkTable { return chunkTable{index: make(map[string]uint32)} }

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

// put stores chunk's state.
func (t *chunkTable) put(chunk string, a acceptor) {
	if i, ok := t.index[chunk]; ok {
		t.slab[i] = a
		return
	}
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
// false to drop the chunk.
func (t *chunkTable) each(f func(chunk string, a *acceptor) bool) {
	for chunk, i := range t.index {
		if !f(chunk, &t.slab[i]) {
			delete(t.index, chunk)
			t.slab[i] = acceptor{}
			t.free = append(t.free, i)
		}
	}
	if len(t.index) < t.peak/2 {
		t.rebuild()
	}
}

// rebuild copies the live entries into a fresh map and slab: Go maps
// never shrink, so this is how reclaimed memory is returned.
func (t *chunkTable) rebuild() {
	index := make(map[string]uint32, len(t.index))
	slab := make([]acceptor, 0, len(t.index))
	for chunk, i := range t.index {
		index[chunk] = uint32(len(slab))
		slab = append(slab, t.slab[i])
	}
	t.index, t.slab, t.free, t.peak = index, slab, nil, len(index)
}
