package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/wrote"
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
	_, err = st.As("ctl").ApplyStatus(ctx, "a", status{Ready: 2}, nil, store.WithObserved(read))
	require.ErrorIs(t, err, store.ErrConflict)
	return err, now
}

// calls records a reconciler's passes of key "a": whether each was told to
// read fresh, and when it began.
type calls struct {
	mu    sync.Mutex
	fresh []bool
	at    []time.Time
}

func (c *calls) add(ctx context.Context) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fresh = append(c.fresh, FreshReadNeeded(ctx))
	c.at = append(c.at, time.Now())
	return len(c.fresh)
}

func (c *calls) n() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.fresh)
}

func (c *calls) times() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.at)
}

func (c *calls) freshReads() []bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.fresh)
}

// conflicting returns a reconciler that returns err for its first n passes
// and nil after.
func conflicting(c *calls, err error, n int) Reconciler[string] {
	return Func[string](func(ctx context.Context, key string) (Result, error) {
		if c.add(ctx) <= n {
			return Result{}, err
		}
		return Result{}, nil
	})
}

// A status write computed from a cache that runs behind another writer
// fails its precondition against a newer stored object, which the cache
// will deliver. The pass is superseded: it runs again exactly once, on the
// cache's event for the stored revision, with no backoff delay before or
// after; hints meanwhile (the cache's events for states older than the
// stored one) do not run it, since each pass would read a stale state and
// conflict again. It is no failure and no paced retry, and Inspect says
// what the key waits for.
func TestConflictWithANewerStoredObjectRunsOnceTheCacheHoldsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conflict, stored := staleStatusConflict(t)
		src := &waitingSource{keys: []string{"a"}}
		src.set(stored - 1)
		var c calls
		m := NewMemMetrics()
		l := mustNew(t, conflicting(&c, conflict, 1), src, append(fixedBackoff(), WithMetrics(m))...) // backoff 1s, 2s, ...
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, c.n())
		time.Sleep(1500 * time.Millisecond) // past the first backoff delay
		synctest.Wait()
		require.Equal(t, 1, c.n(), "no retry while the cache lags: it would read the same stale object")
		info := l.Inspect("a")
		require.Equal(t, PhaseWaiting, info.Phase)
		require.Equal(t, fmt.Sprintf("its write conflicted with a newer stored object: runs once the cache holds revision %d", stored), info.Why)
		require.Zero(t, info.Failures, "a conflict is no failure")
		require.Equal(t, resultError, info.LastResult)
		require.Equal(t, 1, m.Results("test", resultError))
		require.Zero(t, m.Queue("test").retry, "no retry through backoff")
		l.Add("a") // the cache's event for a state older than the stored one
		synctest.Wait()
		require.Equal(t, 1, c.n(), "a hint while the cache lags does not run the key either")

		caughtUp := time.Now()
		src.set(stored)
		l.Add("a") // the cache's event for the stored state
		synctest.Wait()
		require.Equal(t, 2, c.n(), "runs once the cache holds the stored revision")
		require.Equal(t, caughtUp, c.times()[1], "at once: no backoff delay")
		require.Equal(t, []bool{false, false}, c.freshReads())
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, 2, c.n(), "exactly once")
		require.Equal(t, KeyInfo{Key: "a", Phase: PhaseWaiting, Why: "runs on the next change or resync"}, l.Inspect("a"), "healthy: no state left")
		require.Zero(t, m.Queue("test").retry)
		require.Zero(t, l.awaiting.Load())
		require.NoError(t, stop())
	})
}

// When the cache's event for the stored state is no hint (a predicate
// filtered it, or it was judged the Loop's own write), the key runs at the
// end of its read-your-writes window, once.
func TestConflictWhoseStoredStateIsNoHintRunsAtTheWindowsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conflict, stored := staleStatusConflict(t)
		src := &waitingSource{keys: []string{"a"}}
		src.set(stored - 1)
		var c calls
		l := mustNew(t, conflicting(&c, conflict, 1), src, fixedBackoff()...)
		began := time.Now()
		stop := start(t, l)
		synctest.Wait()
		time.Sleep(500 * time.Millisecond)
		src.set(stored) // no hint
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Equal(t, 2, c.n())
		require.Equal(t, began.Add(2*time.Second), c.times()[1], "the 2s read-your-writes timeout")
		require.Equal(t, []bool{false, false}, c.freshReads())
		require.NoError(t, stop())
	})
}

// A conflict against a stored object the cache already holds is no stale
// read: the reconciler conflicts whatever it reads, and is paced by
// backoff, as is a conflict whose error does not say where the object is
// stored, and one that comes with a RequeueAfter.
func TestConflictAgainstWhatTheCacheHoldsIsPacedByBackoff(t *testing.T) {
	conflict, stored := staleStatusConflict(t)
	for name, tc := range map[string]struct {
		err   error
		cache int64
		res   Result
		want  time.Duration
	}{
		"cache holds it":        {err: conflict, cache: stored, want: time.Second},
		"cache ahead":           {err: conflict, cache: stored + 5, want: time.Second},
		"no stored revision":    {err: fmt.Errorf("status of a: %w", store.ErrConflict), cache: stored - 1, want: time.Second},
		"with a RequeueAfter":   {err: conflict, cache: stored - 1, res: Result{RequeueAfter: 3 * time.Second}, want: 3 * time.Second},
		"wrapped as RetryAfter": {err: RetryAfter(conflict, 5*time.Second), cache: stored - 1, want: 5 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := &waitingSource{keys: []string{"a"}}
				src.set(tc.cache)
				var c calls
				r := Func[string](func(ctx context.Context, key string) (Result, error) {
					if c.add(ctx) == 1 {
						return tc.res, tc.err
					}
					return Result{}, nil
				})
				l := mustNew(t, r, src, fixedBackoff()...)
				stop := start(t, l)
				synctest.Wait()
				began := time.Now()
				time.Sleep(time.Hour)
				synctest.Wait()
				require.Equal(t, 2, c.n())
				require.Equal(t, began.Add(tc.want), c.times()[1])
				require.NoError(t, stop())
			})
		})
	}
}

// A cache that does not advance at all (not running, or over another
// store than the one written) never delivers the stored state. The wait
// gives up after a read-your-writes timeout without progress and falls back
// to the paced retry, told to read fresh, the n-th after backoff(n), with
// a warning; a reconciler that keeps conflicting never spins.
func TestConflictWhoseCacheDoesNotAdvanceFallsBackToBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conflict, stored := staleStatusConflict(t)
		src := &waitingSource{keys: []string{"a"}}
		src.set(stored - 1)
		var c calls
		var logs logBuffer
		l := mustNew(t, conflicting(&c, conflict, 3), src, append(fixedBackoff(), WithLogger(newLogger(&logs)))...)
		began := time.Now()
		stop := start(t, l)
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Equal(t, 4, c.n())
		// Each wait lasts the 2s timeout; then backoff 1s, 2s, 4s.
		require.Equal(t, []time.Time{began, began.Add(3 * time.Second), began.Add(7 * time.Second), began.Add(13 * time.Second)}, c.times())
		require.Equal(t, []bool{false, true, true, true}, c.freshReads())
		require.Contains(t, logs.String(), `level=WARN msg="the cache did not advance toward the revision a write conflicted with (not running, stuck, or relisting?)`)
		require.NoError(t, stop())
	})
}

// A cache that advances, however slowly, is waited for: it will deliver
// the stored state.
func TestConflictWaitsForACacheThatAdvancesSlowly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conflict, stored := staleStatusConflict(t)
		src := &waitingSource{keys: []string{"a"}}
		src.set(stored - 4)
		var c calls
		var logs logBuffer
		l := mustNew(t, conflicting(&c, conflict, 1), src, append(fixedBackoff(), WithLogger(newLogger(&logs)))...)
		began := time.Now()
		stop := start(t, l)
		for i := int64(3); i >= 0; i-- {
			time.Sleep(1900 * time.Millisecond)
			src.set(stored - i)
		}
		l.Add("a") // the cache's event for the stored state
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Equal(t, 2, c.n())
		require.Equal(t, began.Add(4*1900*time.Millisecond), c.times()[1])
		require.Equal(t, []bool{false, false}, c.freshReads())
		require.NotContains(t, logs.String(), "level=WARN")
		require.NoError(t, stop())
	})
}

// A key whose last pass conflicted and that is not queued (the Loop
// stopped) is not said to have failed terminally.
func TestInspectSaysAConflictedKeyIsNotQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conflict := fmt.Errorf("status of a: %w", store.ErrConflict)
		var c calls
		l := mustNew(t, conflicting(&c, conflict, 1), keySet("a"), fixedBackoff()...)
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, c.n())
		require.NoError(t, stop())
		info := l.Inspect("a")
		require.Equal(t, PhaseWaiting, info.Phase)
		require.Equal(t, "its write conflicted; not queued (not leading, or the term ended)", info.Why)
	})
}

// A stored revision is compared only with caches over the backend written:
// a conflict in a store no cache of the Loop follows is paced by backoff.
func TestConflictInAStoreNoCacheFollowsIsPacedByBackoff(t *testing.T) {
	d := &decision{}
	conflict, stored := staleStatusConflict(t)
	decide(d, Result{}, conflict, 0, 5, testBackoff)
	require.NotNil(t, d.stale)
	require.Equal(t, stored, d.stale.Revision)
	l := mustNew(t, conflicting(&calls{}, conflict, 1), &waitingSource{keys: []string{"a"}})
	l.waiters[0].b = "another backend"
	require.False(t, l.lagging(d.stale), "a cache over another backend at revision 0 does not lag this one")
	l.waiters[0].b = nil
	require.True(t, l.lagging(d.stale), "a cache over an unknown backend may")
}

func TestSupersededOnlyForALaggingStaleConflictWithoutRequeueAfter(t *testing.T) {
	st := &wrote.Stale{Err: store.ErrConflict, Revision: 9}
	for _, tc := range []struct {
		name    string
		d       decision
		lagging bool
		want    bool
	}{
		{"lagging", decision{conflict: true, stale: st, next: nextAfterWrite}, true, true},
		{"cache holds it", decision{conflict: true, stale: st, next: nextAfterWrite}, false, false},
		{"no stored revision", decision{conflict: true, next: nextAfterWrite}, true, false},
		{"RequeueAfter", decision{conflict: true, stale: st, next: nextAfterWrite, delay: time.Second}, true, false},
		{"not a conflict", decision{stale: st, next: nextAfter}, true, false},
	} {
		d := tc.d
		require.Equal(t, tc.want, superseded(&d, 3, tc.lagging), tc.name)
		if tc.want {
			require.Equal(t, nextAfterStored, d.next, tc.name)
			require.Equal(t, 3, d.requeues, "%s: the count of paced retries is kept", tc.name)
		} else {
			require.Equal(t, tc.d, d, tc.name)
		}
	}
	require.True(t, errors.Is(st, store.ErrConflict))
}

// A reconciler that keeps conflicting against what its cache shows (its
// preconditions come from somewhere else) is paced by backoff, and is loud
// about it: a Warn line at its 8th paced conflict in a row and at each
// doubling, not one per conflict.
func TestRepeatedConflictsWarnAtTheEighthInARow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conflict := fmt.Errorf("status of a: %w", store.ErrConflict)
		var c calls
		var logs logBuffer
		l := mustNew(t, conflicting(&c, conflict, 1<<30), keySet("a"), append(fixedBackoff(), WithLogger(newLogger(&logs)))...)
		stop := start(t, l)
		time.Sleep(5 * time.Minute) // backoff 1s, 2s, ... 32s, then the 1m cap
		synctest.Wait()
		require.Equal(t, 10, c.n())
		warns := 0
		for _, line := range splitLines(logs.String()) {
			if contains(line, "level=WARN") {
				require.Contains(t, line, `msg="reconcile keeps hitting write conflicts against what its cache shows`)
				require.Contains(t, line, "conflictsInARow=8 ")
				warns++
			}
		}
		require.Equal(t, 1, warns, "at the 8th, not before nor after until the 16th")
		require.NoError(t, stop())
	})
}
