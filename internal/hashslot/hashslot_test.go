package hashslot

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// find probes slots for ref under hash h as the tables do, and returns its
// slot or -1.
func find(slots []uint64, h uint32, ref int) int {
	for p := Home(h, len(slots)); ; p = (p + 1) & (len(slots) - 1) {
		s := slots[p]
		if s == 0 {
			return -1
		}
		if Hash(s) == h && Ref(s) == ref {
			return p
		}
	}
}

// A table kept with Put, Grown and Delete acts as a map of its references
// to their hashes: every held reference is found by a probe from its
// home, none removed is, and the slots in use are those held. Hashes are
// drawn from a few values so that probe runs are long, wrap around the
// array's end and hold many keys of one home.
func TestSlotsActLikeAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		held := map[int]uint32{}
		var slots []uint64
		next := 0
		homes := 1 + rng.IntN(64)
		for range 3000 {
			if len(held) > 0 && rng.IntN(3) == 0 {
				for ref, h := range held { // one, at random
					p := find(slots, h, ref)
					require.GreaterOrEqual(t, p, 0, "round %d: ref %d held", round, ref)
					Delete(slots, p)
					delete(held, ref)
					require.Equal(t, -1, find(slots, h, ref), "removed")
					break
				}
			} else {
				if len(held) >= len(slots)-len(slots)/4 {
					slots = Grown(slots, 8)
				}
				h := uint32(rng.IntN(homes)) * 0x9e3779b9
				if rng.IntN(4) == 0 {
					h |= uint32(len(slots) - 1) // home at the array's end: the run wraps
				}
				Put(slots, Of(h, next))
				held[next] = h
				next++
			}
			used := 0
			for _, s := range slots {
				if s != 0 {
					used++
				}
			}
			require.Equal(t, len(held), used, "round %d", round)
		}
		for ref, h := range held {
			require.GreaterOrEqual(t, find(slots, h, ref), 0, "round %d: ref %d held", round, ref)
		}
	}
}

// A slot gives back the hash and reference it was made of, up to the
// largest reference; Grown doubles, to at least its floor.
func TestSlotHoldsItsHashAndRef(t *testing.T) {
	for _, c := range []struct {
		h   uint32
		ref int
	}{{0, 0}, {1, 0}, {0xffffffff, 1<<32 - 2}, {0x80000000, 12345}} {
		s := Of(c.h, c.ref)
		require.NotZero(t, s)
		require.Equal(t, c.h, Hash(s))
		require.Equal(t, c.ref, Ref(s))
	}
	require.Len(t, Grown(nil, 16), 16)
	require.Len(t, Grown(make([]uint64, 16), 8), 32)
	require.Equal(t, 5, Home(0xfffffff5, 16))
}
