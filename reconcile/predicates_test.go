package reconcile

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/predicate"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// A predicate drops the watch events it rejects before the judge; resync
// still lists every key, so the key it filtered runs at the next resync.
func TestPredicateFiltersHintsNotResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		src := FromStore(e.cache, e.st, WithPredicate(predicate.GenerationChanged[appSpec, appStatus]()))
		l := mustNew(t, s, src, WithFieldManager("app"), WithResync(10*time.Minute, 0))
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"), "the first term")

		o := copyOf(e.get(t, "a"))
		o.Meta.Labels = map[string]string{"team": "x"}
		_, err := e.st.As("user").Update(context.Background(), o)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"), "a label change is no hint under GenerationChanged")

		o = copyOf(e.get(t, "a"))
		o.Spec.Replicas = 2
		_, err = e.st.As("user").Update(context.Background(), o)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 2, s.count("a"), "a spec change is")

		e.create(t, "user", &app{Meta: store.Meta{Name: "b"}})
		synctest.Wait()
		require.Equal(t, 1, s.count("b"), "an addition is")

		time.Sleep(10 * time.Minute)
		synctest.Wait()
		require.Equal(t, 3, s.count("a"), "resync lists every key whatever the predicate")
		require.Equal(t, 2, s.count("b"))
		require.NoError(t, stop())
	})
}

// A change the watch lost reaches the Loop through the periodic relist's
// repair, even under a predicate that drops every watch event.
func TestPredicateNeverSuppressesRelistRepairs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := store.New[appSpec, appStatus](memstore.New(), "App")
		require.NoError(t, err)
		ctx := t.Context()
		for _, name := range []string{"a", "b"} {
			_, err := st.As("user").Create(ctx, &app{Meta: store.Meta{Name: name}, Spec: appSpec{Replicas: 1}})
			require.NoError(t, err)
		}
		lossy := lossyWatcher{st, "b"} // every event of b is lost
		c := cache.New[appSpec, appStatus](lossy, cache.WithRelistPeriod(time.Minute))
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = c.Run(cctx) }()
		defer func() { cancel(); <-done }()

		nothing := predicate.Or[appSpec, appStatus]() // passes no watch event
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, FromStore(c, st, WithPredicate(nothing)), WithFieldManager("app"), WithResync(time.Hour, 0))
		stop := start(t, l)
		// b's first reconcile waits (the read-your-writes timeout) for
		// the cache to show the Loop's Reconciling write, which it loses.
		time.Sleep(defaultReadYourWritesTimeout)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"))
		require.Equal(t, 1, s.count("b"))

		for _, name := range []string{"a", "b"} {
			o := copyOf(e2get(t, st, name))
			o.Spec.Replicas = 2
			_, err := st.As("user").Update(ctx, o)
			require.NoError(t, err)
		}
		synctest.Wait()
		require.Equal(t, 1, s.count("a"), "the watch's event for a was dropped by the predicate")
		require.Equal(t, 1, s.count("b"), "the watch lost b's event")

		time.Sleep(time.Minute + time.Minute/4) // a period, and the grace the watch gets to catch up
		synctest.Wait()
		require.Equal(t, int64(1), c.DriftRepairs())
		require.Equal(t, 2, s.count("b"), "the relist's repair is a hint whatever the predicate says")
		require.Equal(t, 1, s.count("a"), "a needed no repair")
		require.NoError(t, stop())
	})
}

// lossyWatcher loses every watch event of one object, and carries on.
type lossyWatcher struct {
	*store.Store[appSpec, appStatus]
	lose string
}

func (w lossyWatcher) Watch(ctx context.Context, from int64) (<-chan store.Event[appSpec, appStatus], error) {
	in, err := w.Store.Watch(ctx, from)
	if err != nil {
		return nil, err
	}
	out := make(chan store.Event[appSpec, appStatus])
	go func() {
		defer close(out)
		for ev := range in {
			if ev.Object != nil && ev.Object.Meta.Name == w.lose {
				continue
			}
			select {
			case out <- ev:
			case <-ctx.Done():
			}
		}
	}()
	return out, nil
}

func e2get(t *testing.T, st *store.Store[appSpec, appStatus], name string) *app {
	t.Helper()
	o, err := st.Get(t.Context(), name)
	require.NoError(t, err)
	return o
}

// Misuse: a nil predicate, or a composition of one, makes New refuse the
// source, saying why.
func TestNilPredicateIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		for _, p := range []predicate.Predicate[appSpec, appStatus]{nil, predicate.And(predicate.LabelsChanged[appSpec, appStatus](), nil)} {
			s := newScript(func(string, int) (Result, error) { return Result{}, nil })
			_, err := New("apps", s, FromStore(e.cache, e.st, WithPredicate(p)), WithFieldManager("app"))
			require.ErrorIs(t, err, ErrInvalidOption)
			require.ErrorContains(t, err, "WithPredicate got a nil predicate")
		}
	})
}

// Misuse: a predicate that panics is reported and its event is a hint; the
// Loop goes on.
func TestPredicateThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", observedApp("a")) // no Reconciling: the Loop writes nothing
		// The cache holds a before the source registers, so a reaches it
		// as a listing, which no predicate sees: the update below is the
		// one event the predicate is called on. Without this wait the
		// cache's watch may deliver the create after the source
		// registered, a second event for the predicate (a watch event,
		// rightly).
		synctest.Wait()
		var logs logBuffer
		m := NewMemMetrics()
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		boom := WithPredicate(func(_, _ *app) bool { panic("predicate") })
		l := mustNew(t, s, FromStore(e.cache, e.st, boom), WithFieldManager("app"), WithMetrics(m), WithLogger(newLogger(&logs)))
		stop := start(t, l)
		synctest.Wait()
		o := copyOf(e.get(t, "a"))
		o.Spec.Replicas = 3
		_, err := e.st.As("user").Update(context.Background(), o)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 2, s.count("a"), "the event whose predicate panicked is a hint")
		require.Equal(t, 1, m.Panics("test"))
		require.NoError(t, stop())
		require.Contains(t, logs.String(), `level=ERROR msg="predicate panicked" predicate=0 object=a`)
	})
}
