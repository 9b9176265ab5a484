package reconcile

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

// fighter is a reconciler that sets .spec.replicas to replicas with
// whole-object updates as manager, and asks to run again after `after`
// (examples/fleet's pattern), counting its writes.
//
// It stops writing after fighterMaxWrites writes in all: a fight the Loops
// fail to hold runs its writes back to back in one instant of the bubble's
// clock, so synctest.Wait would never return and the test would hang
// instead of failing its assertions.
const fighterMaxWrites = 5000

func fighter(e *env, manager string, replicas int, after time.Duration, writes *atomic.Int64) Reconciler[string] {
	return Func[string](func(ctx context.Context, key string) (Result, error) {
		cached, ok := e.cache.Get(key)
		if !ok {
			return Result{}, nil
		}
		if cached.Spec.Replicas != replicas && writes.Load() < fighterMaxWrites {
			o := copyOf(cached)
			o.Spec.Replicas = replicas
			if _, err := e.st.As(manager).Update(ctx, o); err == nil {
				writes.Add(1)
			} else if err = store.IgnoreNotFound(ignoreConflict(err)); err != nil {
				return Result{}, err
			}
		}
		return Result{RequeueAfter: after}, nil
	})
}

// One rule for holds: a key held after an oscillation runs no earlier than
// the hold's end, whatever the reconciler returns. Two controllers fight
// over .spec.replicas and each asks to run again every 250ms: once the
// fight is detected, the key is written at most 15 times a minute.
func TestHoldBoundsAFightWhoseReconcilerRequeuesAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		var writes atomic.Int64
		ma, mb := NewMemMetrics(), NewMemMetrics()
		la, err := New("three", fighter(e, "three", 3, 250*time.Millisecond, &writes), FromStore(e.cache, e.st), append(fixedBackoff(), WithMetrics(ma))...)
		require.NoError(t, err)
		lb, err := New("two", fighter(e, "two", 2, 250*time.Millisecond, &writes), FromStore(e.cache, e.st), append(fixedBackoff(), WithMetrics(mb))...)
		require.NoError(t, err)
		stopA, stopB := start(t, la), start(t, lb)
		for i := 0; ma.Oscillations("three", oscillation.Fight)+mb.Oscillations("two", oscillation.Fight) == 0; i++ {
			require.Less(t, i, 1000, "the fight is detected")
			time.Sleep(50 * time.Millisecond)
			synctest.Wait()
		}
		// Every write of the object counts: the reconcilers' and the
		// Loops' Stalled writes (the store holds this one object, so its
		// revision counts them).
		for minute := 1; minute <= 5; minute++ {
			before, w := e.get(t, "a").Meta.Revision, writes.Load()
			time.Sleep(time.Minute)
			synctest.Wait()
			n := e.get(t, "a").Meta.Revision - before
			t.Logf("minute %d: %d writes (%d by the reconcilers)", minute, n, writes.Load()-w)
			// Before: about 270 writes a minute (every 250ms), hold or not.
			require.LessOrEqual(t, n, int64(15), "minute %d after detection", minute)
		}
		require.Equal(t, conditions.ReasonOscillating, stalledOf(t, e, "a").Reason)
		require.NoError(t, stopA())
		require.NoError(t, stopB())
	})
}

// Loop.AddAfter and Loop.Add obey the hold too: a key on hold is not run
// before its end, however it is added.
func TestHoldDelaysEveryAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, keySet("a"), fixedBackoff()...)
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"))
		until := time.Now().Add(time.Minute)
		l.mu.Lock()
		l.setKeyLocked("a", &keyState{holdUntil: until})
		l.held.Add(1)
		l.mu.Unlock()
		l.AddAfter("a", time.Second)
		l.Add("a")
		l.AddLow("a")
		time.Sleep(59 * time.Second)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"), "held: no run before the hold ends")
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, 2, s.count("a"), "one run at the hold's end")
		require.NoError(t, stop())
	})
}

// The status budget: a status write that never settles, before every
// Requeue, is paced by the status budget and reported as Throttled, not
// as Stalled.
func TestStatusWriteAndRequeueStormIsReportedAndSlowed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		// Every write of the object, the Loop's Stalled writes included,
		// with its (virtual) time.
		var mu sync.Mutex
		var at []time.Time
		e.cache.AddHandler(func(old, _ *app) {
			if old != nil {
				mu.Lock()
				at = append(at, time.Now())
				mu.Unlock()
			}
		})
		var writes atomic.Int64
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			n := writes.Add(1)
			if n >= spinGuard {
				return Result{}, nil
			}
			_, err := e.st.As("app").ApplyStatus(ctx, key, appStatus{Phase: "seen " + time.Now().String(), Replicas: int(n)}, nil)
			return Result{RequeueAfterWrite: true}, err
		})
		m := NewMemMetrics()
		l := mustNew(t, r, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"), WithMetrics(m))...)
		stop := start(t, l)
		for i := 0; l.Info().Throttled == 0; i++ {
			require.Less(t, i, 10_000, "throttled")
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
		}
		ks := l.InspectAll()
		require.Len(t, ks, 1)
		require.Equal(t, PhaseHeld, ks[0].Phase)
		require.Contains(t, ks[0].Why, "throttled")
		require.Equal(t, oscillation.Throttled, ks[0].Oscillation.Kind)
		require.False(t, ks[0].Stalled)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		require.NoError(t, stop())

		mu.Lock()
		defer mu.Unlock()
		// The most writes in any minute [t, t+1m) of the five.
		most := 0
		for i, t0 := range at {
			n := 0
			for _, t1 := range at[i:] {
				if t1.Sub(t0) < time.Minute {
					n++
				}
			}
			most = max(most, n)
		}
		t.Logf("%d writes in 5 minutes, at most %d in a minute", len(at), most)
		// Before: 9,999 writes at once (stopped by the guard), no report.
		// Status is not desired state: the status budget (120 a minute)
		// paces it, and it is reported as Throttled, never as Stalled
		// (before the status budget: Stalled=Oscillating, "too many
		// writes", at most 60 a minute).
		require.LessOrEqual(t, most, 2*oscillation.DefaultMaxStatusWrites)
		require.Positive(t, m.Oscillations("test", oscillation.Throttled))
		require.Zero(t, m.Oscillations("test", oscillation.TooManyWrites))
		_, stalled := conditions.Get(e.get(t, "a").Conditions, conditions.Stalled)
		require.False(t, stalled, "never Stalled")
	})
}
