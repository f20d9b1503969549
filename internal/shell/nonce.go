package shell

import (
	"crypto/rand"
	"encoding/binary"
)

// maxNonce is 2^53: every number on the wire stays below it.
const maxNonce = 1 << 53

// NewNonce draws an incarnation's nonce (lease.Config.Nonce) in
// 1..2^53-1 from the operating system's random source: never from a
// seed, so that two starts of one node share it only by chance
// (2^-53), whatever the clock and the -seed flag say.
func NewNonce() uint64 {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return 1 + binary.LittleEndian.Uint64(b[:])%(maxNonce-1)
}
