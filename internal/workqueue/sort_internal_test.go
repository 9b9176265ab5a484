package workqueue

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSortItemsOrdersLikeCompareItems(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	shapes := map[string]func(i, n int) delayItem{
		"random with ties": func(i, n int) delayItem { return delayItem{at: int64(r.IntN(20)), seq: uint32(i)} },
		"sorted":           func(i, n int) delayItem { return delayItem{at: int64(i), seq: uint32(i)} },
		"reversed":         func(i, n int) delayItem { return delayItem{at: int64(n - i), seq: uint32(i)} },
		"all equal times":  func(i, n int) delayItem { return delayItem{at: 5, seq: uint32(n - i)} },
	}
	for name, item := range shapes {
		for _, n := range []int{0, 1, 2, 12, 13, 100, 1000} {
			h := make([]delayItem, n)
			for i := range h {
				h[i] = item(i, n)
				h[i].node = int32(i)
			}
			want := slices.Clone(h)
			slices.SortFunc(want, compareItems)
			sortItems(h)
			require.Equal(t, want, h, "%s, n=%d", name, n)
		}
	}
}

func TestSortDueOrdersLikeCompareItems(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	q := New[int]()
	defer q.ShutDown()
	q.delay.seq = math.MaxUint32 - 10000 // insertion numbers wrap past zero
	for _, n := range []int{255, 256, 1000, 5000} {
		for _, spread := range []int{1, 1000, 1 << 40} {
			h := make([]delayItem, n)
			for i := range h {
				q.delay.seq += uint32(1 + r.IntN(3)) // wraps past zero on the way
				h[i] = delayItem{at: int64(r.IntN(spread)) - 1<<20, seq: q.delay.seq, node: int32(i)}
			}
			r.Shuffle(n, func(i, j int) { h[i], h[j] = h[j], h[i] })
			want := slices.Clone(h)
			slices.SortFunc(want, compareItems)
			q.sortDue(h)
			require.Equal(t, want, h, "n=%d spread=%d", n, spread)
		}
	}
}
