package reconcile

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/oscillation"
)

// The detectors' table holds what a Go map would through random puts
// (new keys and keys held), removes (held, absent, and keys removed
// before), removes from within all, across growths, the long probe runs
// that removal shifts back, and nodes freed and used again: every key
// held is found with its own detector, all visits each once, no other
// key is found, and a remade table holds the same.
func TestDetTableActsLikeAMap(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		rng := rand.New(rand.NewPCG(seed, 7))
		var tab detTable[string]
		model := map[string]*oscillation.Detector{}
		check := func(tab *detTable[string]) {
			t.Helper()
			require.Equal(t, len(model), tab.len())
			for k, d := range model {
				require.Same(t, d, tab.get(k), "key %q", k)
			}
			for i := range 2000 {
				if k := "k" + strconv.Itoa(i); model[k] == nil {
					require.Nil(t, tab.get(k), "key %q, not held", k)
				}
			}
			seen := map[string]bool{}
			tab.all(func(k string, d *oscillation.Detector) {
				require.False(t, seen[k], "key %q visited twice", k)
				seen[k] = true
				require.Same(t, model[k], d, "key %q", k)
			})
			require.Len(t, seen, len(model))
		}
		require.Nil(t, tab.get("k1"), "an empty table")
		tab.remove("k1") // a no-op
		check(&tab)
		for round := range 30 {
			for range 300 {
				k := "k" + strconv.Itoa(rng.IntN(2000))
				switch d := model[k]; {
				case d != nil && rng.IntN(4) == 0: // a new detector for a key held
					d = oscillation.New(oscillation.Config{})
					tab.put(k, d)
					model[k] = d
				case d != nil:
					tab.remove(k)
					delete(model, k)
				default:
					d = oscillation.New(oscillation.Config{})
					tab.put(k, d)
					model[k] = d
				}
			}
			tab.remove("absent") // a no-op
			check(&tab)
			switch round % 10 {
			case 4: // remove every third key from within all
				i := 0
				tab.all(func(k string, _ *oscillation.Detector) {
					if i++; i%3 == 0 {
						tab.remove(k)
						delete(model, k)
					}
				})
				check(&tab)
			case 7:
				tab = tab.remade()
				check(&tab)
			case 9: // empty it, then fill again
				for k := range model {
					tab.remove(k)
					delete(model, k)
				}
				check(&tab)
			}
		}
		require.Greater(t, len(tab.slots), 16, "the table grew")
	}
}

// A remade table holds only room for its keys: the pages and slots a
// burst of keys grew are let go once few are left.
func TestDetTableRemadeKeepsRoomForItsKeys(t *testing.T) {
	var tab detTable[int]
	for i := range 5000 {
		tab.put(i, oscillation.New(oscillation.Config{}))
	}
	for i := 10; i < 5000; i++ {
		tab.remove(i)
	}
	small := tab.remade()
	require.Equal(t, 10, small.len())
	require.Len(t, small.slots, 16)
	require.Len(t, small.pages, 1)
	for i := range 10 {
		require.Same(t, tab.get(i), small.get(i))
	}
}
