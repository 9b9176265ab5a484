package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// Write observers chain: one added to a ctx that has one does not replace
// it; both see every successful write, the earlier first.
func TestWriteObserversChain(t *testing.T) {
	st, err := store.New[map[string]any, map[string]any](memstore.New(), "Thing")
	require.NoError(t, err)
	var seen []string
	ctx := store.WithWriteObserver(context.Background(), func(rev int64) { seen = append(seen, "outer") })
	ctx = store.WithWriteObserver(ctx, nil)
	ctx = store.WithWriteObserver(ctx, func(rev int64) { seen = append(seen, "inner") })
	_, err = st.As("m").Create(ctx, &store.Object[map[string]any, map[string]any]{Meta: store.Meta{Name: "a"}})
	require.NoError(t, err)
	require.Equal(t, []string{"outer", "inner"}, seen)
}

// An observer that panics does not keep the next one in the chain from
// seeing the write (a Loop's, when the panicking one was on the ctx given
// to the Loop's Run); the panic then goes on to the writer, whose write
// is done.
func TestWriteObserverThatPanicsDoesNotHideTheWrite(t *testing.T) {
	st, err := store.New[map[string]any, map[string]any](memstore.New(), "Thing")
	require.NoError(t, err)
	var seen int64
	ctx := store.WithWriteObserver(context.Background(), func(int64) { panic("observer") })
	ctx = store.WithWriteObserver(ctx, func(rev int64) { seen = rev })
	require.PanicsWithValue(t, "observer", func() {
		_, _ = st.As("m").Create(ctx, &store.Object[map[string]any, map[string]any]{Meta: store.Meta{Name: "a"}})
	})
	obj, err := st.Get(context.Background(), "a")
	require.NoError(t, err, "the write is done")
	require.Equal(t, obj.Meta.Revision, seen, "the next observer saw it")
}
