package hashslot

// Of returns the slot for a key whose hash is h and whose reference is
// ref, 0 <= ref < 1<<32-1.
func Of(h uint32, ref int) uint64 { return uint64(h)<<32 | uint64(uint32(ref+1)) }

// Hash returns the hash held in slot s.
func Hash(s uint64) uint32 { return uint32(s >> 32) }

// Ref returns the reference held in slot s, not empty.
func Ref(s uint64) int { return int(uint32(s)) - 1 }

// Home returns the first slot a key with hash h may be in, among slots
// of length n, a power of two.
func Home(h uint32, n int) int { return int(h) & (n - 1) }

// Grown returns a slot array of twice len(old) slots, at least least
// (a power of two), holding old's slots: no key is read.
func Grown(old []uint64, least int) []uint64 {
	slots := make([]uint64, max(least, 2*len(old)))
	for _, s := range old {
		if s != 0 {
			Put(slots, s)
		}
	}
	return slots
}

// Put stores s, not 0, in the first empty slot of its probe run; slots
// must have one.
func Put(slots []uint64, s uint64) {
	mask := len(slots) - 1
	p := int(Hash(s)) & mask
	for slots[p] != 0 {
		p = (p + 1) & mask
	}
	slots[p] = s
}

// Delete empties slot p, shifting the later slots of its probe run back
// where their keys' probes still find them.
func Delete(slots []uint64, p int) {
	mask := len(slots) - 1
	for q := (p + 1) & mask; slots[q] != 0; q = (q + 1) & mask {
		// The slot in q may move back to p only if its home slot is not
		// in the run (p, q].
		home := int(Hash(slots[q])) & mask
		if (q-home)&mask >= (q-p)&mask {
			slots[p] = slots[q]
			p = q
		}
	}
	slots[p] = 0
}
