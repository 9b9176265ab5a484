package reconcile

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// staleStatusConflict returns the error of a status apply computed from a
// read the store has moved past (the object's spec changed since), and the
// revision the object is stored at.
func staleStatusConflict(t *testing.T) (error, int64) {
	t.Helper()
	ctx := context.Background()
	type spec struct{ Replicas int }
	type status struct{ Ready int }
	st, err := store.New[spec, status](memstore.New(), "App")
	require.NoError(t, err)
	w := st.As("user")
	obj := &store.Object[spec, status]{Meta: store.Meta{Name: "a"}}
	_, err = w.Create(ctx, obj)
	require.NoError(t, err)
	read := obj.Meta
	obj.Spec.Replicas = 2
	now, err := w.Update(ctx, obj)
	require.NoError(t, err)
	_, err = st.As("ctl").ApplyStatus(ctx, "a", status{Ready: 2}, nil, store.IfObserved(read))
	require.ErrorIs(t, err, store.ErrConflict)
	return err, now
}

// A status write computed from a cache that runs behind the writer fails
// its precondition against a revision the cache does not hold yet. The key
// runs again once the cache holds that revision (the pass would only read
// the same stale object again before then), not after a backoff delay, so
// a writer that runs ahead costs one conflict per change rather than a
// retry storm; hints for the key meanwhile wait too. A conflict against a revision the cache already holds is
// paced by backoff as before, so a reconciler that keeps conflicting never
// spins.
func TestConflictOnALaggingCacheRunsAgainOnceTheCacheCatchesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conflict, stored := staleStatusConflict(t)
		src := &waitingSource{keys: []string{"a"}}
		src.set(stored - 1)
		var mu sync.Mutex
		runs := 0
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			mu.Lock()
			defer mu.Unlock()
			runs++
			if runs <= 2 {
				return Result{}, conflict
			}
			return Result{}, nil
		})
		count := func() int {
			mu.Lock()
			defer mu.Unlock()
			return runs
		}
		l := mustNew(t, r, src, fixedBackoff()...) // backoff 1s, 2s, ...
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, count())
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		require.Equal(t, 1, count(), "waits for the cache")
		// A hint meanwhile (the cache's event for a state before the
		// stored one) does not run the pass either.
		l.Add("a")
		src.set(stored - 1)
		synctest.Wait()
		require.Equal(t, 1, count(), "a hint while the cache lags waits too")
		src.set(stored)
		synctest.Wait()
		require.Equal(t, 2, count(), "runs once the cache holds the stored revision, before any backoff")
		// The cache holds the revision now: the second conflict is paced.
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		require.Equal(t, 2, count(), "a conflict the cache is not behind on waits for backoff")
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, 3, count())
		require.NoError(t, stop())
	})
}

// A hold for the caches ends with its term: the next term's listing runs
// the key, though the cache still lags (the last term's wait, which would
// have run it, ended with that term).
func TestCacheHoldEndsWithItsTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conflict, stored := staleStatusConflict(t)
		e := newEnv(t, "App", nil)
		defer e.stop()
		takeOver(t, e.b)
		el := &handElector{b: e.b, grants: make(chan struct{})}
		src := &waitingSource{keys: []string{"a"}}
		src.set(stored - 1)
		var mu sync.Mutex
		runs := 0
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			mu.Lock()
			defer mu.Unlock()
			runs++
			return Result{}, conflict
		})
		count := func() int {
			mu.Lock()
			defer mu.Unlock()
			return runs
		}
		l := mustNew(t, r, src, append(fixedBackoff(), WithElector(el))...)
		stop := start(t, l)
		synctest.Wait()
		el.grants <- struct{}{}
		synctest.Wait()
		require.Equal(t, 1, count(), "the first term's pass conflicts and waits for the cache")
		el.endTerm()
		synctest.Wait()
		el.grants <- struct{}{}
		synctest.Wait()
		require.Equal(t, 2, count(), "the next term runs the key")
		require.NoError(t, stop())
	})
}
