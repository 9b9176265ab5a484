package reconcile

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// statusWriter is a reconciler that applies a status to its object and
// fails when fail says so.
func statusWriter(e *env, fail func(key string) bool) Reconciler[string] {
	return Func[string](func(ctx context.Context, key string) (Result, error) {
		if fail(key) {
			return Result{}, errors.New("boom")
		}
		_, err := e.st.As("ctl").ApplyStatus(ctx, key, appStatus{Phase: "Up"}, nil)
		return Result{}, store.IgnoreNotFound(err)
	})
}

// Observe-only: the reconciler's writes and the Loop's own Stalled write
// reach the report and the log, never the store.
func TestObserveOnlyWritesNothingAndReportsWhatItWouldWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
		e.create(t, "user", &app{Meta: store.Meta{Name: "bad"}})
		rev := e.get(t, "bad").Meta.Revision
		var mu sync.Mutex
		var seen []store.DryRunResult
		var logs logBuffer
		l, err := New("ctl", statusWriter(e, func(k string) bool { return k == "bad" }), FromStore(e.cache, e.st),
			append(fixedBackoff(), WithStallAfter(2), WithLogger(newLogger(&logs)),
				WithObserveOnly(func(ctx context.Context, r store.DryRunResult) {
					mu.Lock()
					defer mu.Unlock()
					seen = append(seen, r)
				}))...)
		require.NoError(t, err)
		stop := start(t, l)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.NoError(t, stop())

		require.Equal(t, rev, e.get(t, "bad").Meta.Revision, "the store's revision: nothing was written")
		require.Empty(t, e.get(t, "a").Status.Phase)
		_, stalled := conditions.Get(e.get(t, "bad").Conditions, conditions.Stalled)
		require.False(t, stalled, "the Loop's Stalled write was refused too")
		mu.Lock()
		defer mu.Unlock()
		var ops []string
		for _, r := range seen {
			if r.Write {
				ops = append(ops, r.Op+" "+r.Name+" as "+r.Manager)
			}
		}
		require.Contains(t, ops, "ApplyStatus a as ctl")
		require.Contains(t, ops, "ApplyStatus bad as ctl-loop", "the Stalled it would have set")
		require.Regexp(t, `msg="observe-only: write refused" controller=ctl key=a reconcileID=\S+ op=ApplyStatus kind=App name=a manager=ctl\n`, logs.String())
	})
}

// The annotation makes one object observe-only; the others are written.
func TestObserveOnlyAnnotationCoversOneObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a", Annotations: map[string]string{observeOnlyAnnotation: "true"}}})
		e.create(t, "user", &app{Meta: store.Meta{Name: "b"}})
		l, err := New("ctl", statusWriter(e, func(string) bool { return false }), FromStore(e.cache, e.st), fixedBackoff()...)
		require.NoError(t, err)
		stop := start(t, l)
		synctest.Wait()
		require.NoError(t, stop())
		require.Empty(t, e.get(t, "a").Status.Phase, "observe-only: not written")
		require.Equal(t, "Up", e.get(t, "b").Status.Phase)
	})
}

// Observe-only: the Stalled a failing key would get is reported once, not
// at every failure, though the store never shows it; a new reason is
// reported again.
func TestObserveOnlyReportsAStalledOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "bad"}})
		var mu sync.Mutex
		var stalled []string
		l, err := New("ctl", statusWriter(e, func(string) bool { return true }), FromStore(e.cache, e.st),
			append(fixedBackoff(), WithStallAfter(1), quiet(),
				WithObserveOnly(func(ctx context.Context, r store.DryRunResult) {
					if r.Manager == "ctl-loop" {
						mu.Lock()
						defer mu.Unlock()
						stalled = append(stalled, r.Op)
					}
				}))...)
		require.NoError(t, err)
		stop := start(t, l)
		time.Sleep(10 * time.Minute) // failures at the backoff cap, a minute apart
		synctest.Wait()
		require.NoError(t, stop())
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{"ApplyStatus"}, stalled, "one Stalled reported, not one per failure")
	})
}
