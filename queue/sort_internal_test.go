package queue

import (
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
