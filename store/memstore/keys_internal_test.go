package memstore

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
)

// The key table holds what a Go map would through random adds and
// removes, across growths and the long probe runs that removal must
// shift back: every key held is found, with its own entry, and no key
// removed or never added is.
func TestKeysActLikeAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var tab keys
	model := map[string]*kv.KeyValue{}
	check := func() {
		t.Helper()
		require.Equal(t, len(model), tab.n)
		for k, e := range model {
			require.Same(t, e, tab.get(k), "key %q", k)
		}
		for i := range 3000 {
			if k := "k" + strconv.Itoa(i); model[k] == nil {
				require.Nil(t, tab.get(k), "key %q, not held", k)
			}
		}
	}
	require.Nil(t, tab.get("k1"), "an empty table")
	tab.remove("k1") // a no-op
	for round := range 20 {
		for range 400 {
			k := "k" + strconv.Itoa(rng.IntN(3000))
			if e := model[k]; e != nil {
				tab.remove(k)
				delete(model, k)
				continue
			}
			e := newEntry(k, 1)
			tab.add(e)
			model[k] = e
		}
		tab.remove("absent") // a no-op
		check()
		if round == 10 { // empty it, then fill again
			for k := range model {
				tab.remove(k)
				delete(model, k)
			}
			check()
		}
	}
	grown := 0
	for _, s := range tab.shards {
		grown = max(grown, len(s.slots))
	}
	require.Greater(t, grown, 8, "a table grew")
}

// A key a write found last, then removed, is not found again; added
// anew, its new entry is found, not the removed one. A lookup of another
// key in between finds its own entry; a read (get) does not change which
// entry is kept.
func TestKeysForgetTheLastKeyFoundOnceRemoved(t *testing.T) {
	var tab keys
	old, other := newEntry("k", 1), newEntry("j", 1)
	tab.add(old)
	tab.add(other)
	require.Same(t, old, tab.getKept("k"))
	require.Same(t, old, tab.last)
	require.Same(t, old, tab.get("k"), "found again")
	require.Same(t, other, tab.get("j"))
	require.Same(t, old, tab.last, "a read keeps nothing")
	require.Same(t, other, tab.getKept("j"))
	require.Same(t, other, tab.get("j"))
	require.Same(t, old, tab.getKept("k"))
	tab.remove("k")
	require.Nil(t, tab.get("k"), "the key found last was removed")
	renewed := newEntry("k", 3)
	tab.add(renewed)
	require.Same(t, renewed, tab.getKept("k"))
	tab.remove("j") // not the last found: k stays found
	require.Same(t, renewed, tab.get("k"))
	require.Nil(t, tab.get("j"))
}

// A slot holds an entry's pointer and its key's hash side by side, 16
// bytes: four slots to a cache line, none across two (the table is an
// array of them), so a lookup of a cold key reads one line of the table
// and then the entry, where the hashes in an array of their own cost a
// line more (at 1M keys, a cache miss more per lookup).
func TestKeySlotIsAQuarterOfALine(t *testing.T) {
	require.Equal(t, uintptr(16), unsafe.Sizeof(keySlot{}))
	var s keyShard
	s.grow()
	require.Len(t, s.slots, 8)
	require.Zero(t, uintptr(unsafe.Pointer(&s.slots[0]))%16, "slots start on a 16-byte boundary")
}
