package fastdelay

import (
	"math/bits"
	"math/rand/v2"
)

// Source is the wyrand generator: one add and one 128-bit multiply per
// number, statistically sound for spreading delays, not for cryptography. It is not safe for concurrent use; its
// owner advances it under its own lock. The zero Source works but yields
// the same numbers every time; New seeds one.
type Source uint64

// New returns a Source seeded from math/rand/v2.
func New() Source { return Source(rand.Uint64()) }

// Float64 returns a number uniform in [0, 1), a multiple of 2⁻⁵³.
func (s *Source) Float64() float64 {
	*s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(uint64(*s), uint64(*s^0xe7037ed1a0b428db))
	return float64((hi^lo)>>11) * 0x1p-53
}
