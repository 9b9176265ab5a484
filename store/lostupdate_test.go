package store_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

type lostCounter struct {
	N int `json:"n"`
}

// TestNoLostUpdates is the lost-update proof: writers that each read, add
// one and write back with Update, retrying on ErrConflict, end at exactly
// writers × increments. Any write based on a stale read that landed would
// lose an increment and show up as a smaller total.
//
// The full 8 × 10,000 run takes a few seconds on 2 cores without the race
// detector. Under -race, where every memory access is instrumented, it runs
// 8 × 500 increments instead (raceScale); the concurrency is the same.
func TestNoLostUpdates(t *testing.T) {
	const writers = 8
	increments := 10_000 / raceScale
	st, err := store.New[lostCounter, struct{}](memstore.New(), "Counter")
	require.NoError(t, err)
	ctx := t.Context()
	_, err = st.As("setup").Create(ctx, &store.Object[lostCounter, struct{}]{Meta: store.Meta{Name: "c"}})
	require.NoError(t, err)

	var g errgroup.Group
	conflicts := make([]int, writers)
	for i := range writers {
		w := st.As("writer")
		g.Go(func() error {
			for range increments {
				for {
					obj, err := st.Get(ctx, "c")
					if err != nil {
						return err
					}
					obj.Spec.N++
					_, err = w.Update(ctx, obj)
					if errors.Is(err, store.ErrConflict) {
						conflicts[i]++
						continue
					}
					if err != nil {
						return err
					}
					break
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())

	got, err := st.Get(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, writers*increments, got.Spec.N)
	require.EqualValues(t, 1+writers*increments, got.Meta.Generation, "every increment changed the spec once")
	total := 0
	for _, c := range conflicts {
		total += c
	}
	t.Logf("%d increments, %d conflicts retried", writers*increments, total)
}
