package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/wrote"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// The Loop's channel (package wrote) is told of every write with the name
// of the object written, without the store's key prefix, and the backend:
// the Loop judges an own write per key by the name. Each kind of write
// reports it: a create, an update, a status apply, a delete and a purge.
func TestWriteReportsNameTheObjectWritten(t *testing.T) {
	b := memstore.New()
	st, err := store.New[map[string]any, map[string]any](b, "Thing", store.WithKeyPrefix("team"))
	require.NoError(t, err)
	type report struct {
		backend any
		name    string
		rev     int64
	}
	var got []report
	ctx := wrote.With(context.Background(), func(backend any, name string, rev int64) {
		got = append(got, report{backend, name, rev})
	})
	w := st.As("m")
	var want []report
	for _, name := range []string{"a", "b"} {
		rev, err := w.Create(ctx, &store.Object[map[string]any, map[string]any]{Meta: store.Meta{Name: name}})
		require.NoError(t, err)
		want = append(want, report{b, name, rev})
	}
	obj, err := st.Get(ctx, "a")
	require.NoError(t, err)
	obj.Spec = map[string]any{"x": 1.0}
	rev, err := w.Update(ctx, obj)
	require.NoError(t, err)
	want = append(want, report{b, "a", rev})
	res, err := w.ApplyStatus(ctx, "b", map[string]any{"phase": "ok"}, nil)
	require.NoError(t, err)
	want = append(want, report{b, "b", res.Revision})
	rev, err = w.Delete(ctx, "a")
	require.NoError(t, err)
	want = append(want, report{b, "a", rev})
	rev, err = w.Purge(ctx, "b", 0)
	require.NoError(t, err)
	want = append(want, report{b, "b", rev})
	require.Equal(t, want, got)
}

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
