package store_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// A ctx's write limit paces every write made with it; limits chain, and a
// limit that fails or panics fails the write, which writes nothing.
func TestWithWriteLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newTypedStore(t, memstore.New())
		b, err := backoff.NewBucket[string](backoff.BucketConfig{Rate: 2, Burst: 1})
		require.NoError(t, err)
		var order []string
		outer := storeaccess.WithWriteLimit(context.Background(), func(ctx context.Context) error { order = append(order, "outer"); return b.Wait(ctx) })
		ctx := storeaccess.WithWriteLimit(outer, func(context.Context) error { order = append(order, "inner"); return nil })
		require.Equal(t, outer, storeaccess.WithWriteLimit(outer, nil), "a nil wait adds nothing")
		w := st.As("alice")
		t0 := time.Now()
		for _, name := range []string{"a", "b", "c"} {
			_, err := w.Create(ctx, &typedObj{Meta: store.Meta{Name: name}})
			require.NoError(t, err)
		}
		require.Equal(t, time.Second, time.Since(t0), "three writes at 2/s, burst 1")
		require.Equal(t, []string{"outer", "inner", "outer", "inner", "outer", "inner"}, order)

		boom := errors.New("over budget")
		failing := storeaccess.WithWriteLimit(context.Background(), func(context.Context) error { return boom })
		_, err = w.Create(failing, &typedObj{Meta: store.Meta{Name: "d"}})
		require.ErrorIs(t, err, boom)
		panicking := storeaccess.WithWriteLimit(context.Background(), func(context.Context) error { panic("limit") })
		_, err = w.Create(panicking, &typedObj{Meta: store.Meta{Name: "d"}})
		require.EqualError(t, err, "store: write limit panicked: string: limit")
		_, err = st.Get(context.Background(), "d")
		require.ErrorIs(t, err, store.ErrNotFound, "no refused write landed")
	})
}

// Purge is a write like the others: it waits for ctx's write limit, and a
// limit that fails leaves the value where it is. (It sent its Txn
// without waiting, so a Loop's WithWriteLimit did not bound its purges.)
func TestPurgeWaitsForTheWriteLimit(t *testing.T) {
	ctx := context.Background()
	st := newTypedStore(t, memstore.New())
	w := st.As("alice")
	for _, name := range []string{"a", "b"} {
		_, err := w.Create(ctx, &typedObj{Meta: store.Meta{Name: name}})
		require.NoError(t, err)
	}
	boom := errors.New("over budget")
	failing := storeaccess.WithWriteLimit(ctx, func(context.Context) error { return boom })
	_, err := w.Purge(failing, "a", 0)
	require.ErrorIs(t, err, boom)
	_, err = st.Get(ctx, "a")
	require.NoError(t, err, "the refused purge deleted nothing")

	waits := 0
	counting := storeaccess.WithWriteLimit(ctx, func(context.Context) error { waits++; return nil })
	_, err = w.Purge(counting, "b", 0)
	require.NoError(t, err)
	require.Equal(t, 1, waits, "the purge waited once")
	_, err = st.Get(ctx, "b")
	require.ErrorIs(t, err, store.ErrNotFound)
}
