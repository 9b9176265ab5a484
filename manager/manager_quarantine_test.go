package manager_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/manager"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// TestManagerReadyNamesAQuarantinedValue: a value that does not decode used
// to keep its cache from syncing, and Ready said only "cache 0 has not
// synced". Now the cache syncs and the Loop runs on the rest of the kind,
// and Ready names the bad key until it is purged.
func TestManagerReadyNamesAQuarantinedValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := memstore.New()
		st, err := store.New[map[string]int, map[string]int](b, "Widget")
		require.NoError(t, err)
		_, err = st.As("a").Create(ctx, &store.Object[map[string]int, map[string]int]{Meta: store.Meta{Name: "good"}})
		require.NoError(t, err)
		badRev, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "Widget/bad", Value: []byte(`{"metadata":`)})
		require.NoError(t, err)

		c := cache.New(st)
		m := manager.New()
		require.NoError(t, m.AddCache(c))
		reconciled := make(chan string, 10)
		l, err := reconcile.New("widgets", reconcile.Func[string](func(_ context.Context, key string) (reconcile.Result, error) {
			reconciled <- key
			return reconcile.Result{}, nil
		}), keySet("good"))
		require.NoError(t, err)
		require.NoError(t, m.AddLoop(l))
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- m.Run(runCtx) }()
		require.Equal(t, "good", <-reconciled, "the Loop runs although a value of the kind is bad")
		synctest.Wait()

		err = m.Ready()
		require.ErrorIs(t, err, manager.ErrNotReady)
		require.ErrorContains(t, err, `"Widget/bad"`)
		var de *store.DecodeError
		require.ErrorAs(t, err, &de)
		require.Equal(t, badRev, de.Revision)
		require.NoError(t, m.Live(), "a quarantined value is not a failure")

		rev, err := st.As("ops").Purge(ctx, "bad", badRev)
		require.NoError(t, err)
		require.NoError(t, c.WaitFor(ctx, rev))
		require.NoError(t, m.Ready())
		cancel()
		require.NoError(t, <-done)
	})
}

// A nil *cache.Cache passed AddCache's nil check and panicked on the cache's
// goroutine once Run started; a nil *Loop likewise.
func TestManagerRejectsTypedNils(t *testing.T) {
	m := manager.New()
	require.ErrorIs(t, m.AddCache((*cache.Cache[int, int])(nil)), reconcile.ErrInvalidOption)
	require.ErrorIs(t, m.AddLoop((*reconcile.Loop[string])(nil)), reconcile.ErrInvalidOption)
}
