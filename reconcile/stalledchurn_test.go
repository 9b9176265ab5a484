package reconcile

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

// statusFromSpec is a reconciler that computes its status from the spec it
// read from the cache and writes it only for that generation
// (WithGeneration), asking to run again once the write is readable.
// Computing the status takes 0, 1 or 2ms: while another writer moves the
// spec, some of its writes are rejected with store.ErrConflict, which it
// returns.
func statusFromSpec(e *env) Reconciler[string] {
	var calls atomic.Int64
	return Func[string](func(ctx context.Context, key string) (Result, error) {
		cached, ok := e.cache.Get(key)
		if !ok || cached.Status.Replicas == cached.Spec.Replicas {
			return Result{}, nil
		}
		time.Sleep(time.Duration(calls.Add(1)%3) * time.Millisecond)
		_, err := e.st.As("test").ApplyStatus(ctx, key, appStatus{Replicas: cached.Spec.Replicas}, nil,
			store.WithGeneration(cached.Meta.Generation))
		if err != nil {
			return Result{}, err
		}
		return Result{RequeueAfterWrite: true}, nil
	})
}

// staleStatus is statusFromSpec's stale-read shape: it writes the whole
// status of the object as it read it from the cache, conditional on that
// object's revision, so a cache behind the store makes the write fail
// with store.ErrConflict. Computing the status takes 0, 1 or 2 times
// unit.
func staleStatus(e *env, unit time.Duration) Reconciler[string] {
	var calls atomic.Int64
	return Func[string](func(ctx context.Context, key string) (Result, error) {
		cached, ok := e.cache.Get(key)
		if !ok || cached.Status.Replicas == cached.Spec.Replicas {
			return Result{}, nil
		}
		time.Sleep(time.Duration(calls.Add(1)%3) * unit)
		o := copyOf(cached)
		o.Status.Replicas = cached.Spec.Replicas
		if _, err := e.st.As("test").UpdateStatus(ctx, o); err != nil {
			return Result{}, fmt.Errorf("status of %s: %w", key, err)
		}
		return Result{}, nil
	})
}

// burst moves the spec of every object in names n times within a second, as
// another writer ("user") with server-side apply, one object after the
// other.
func burst(t *testing.T, e *env, n int, names ...string) {
	t.Helper()
	every := time.Second / time.Duration(n)
	for i := range n {
		name := names[i%len(names)]
		_, err := e.st.As("user").Apply(context.Background(), name, map[string]any{"replicas": i + 2})
		require.NoError(t, err)
		time.Sleep(every)
	}
}

// writesBy counts the writes of the kind since revision since whose
// LastWrite names manager, per object name: the store's own write history.
func writesBy(t *testing.T, e *env, since int64, manager string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	end := e.b.Revision()
	out := map[string]int{}
	if end <= since {
		return out
	}
	ch, err := e.st.Watch(ctx, since)
	require.NoError(t, err)
	for ev := range ch {
		require.NoError(t, ev.Err)
		if ev.Object != nil && ev.Object.Meta.LastWrite.Manager == manager {
			out[ev.Object.Meta.Name]++
		}
		if ev.Revision >= end {
			break
		}
	}
	return out
}

// Stalled does not churn while the spec moves. One second, 1,000 spec
// updates by another writer to one object: some of the reconciler's status
// writes hit version conflicts, and the Loop writes its condition to that
// object at most 5 times, whatever the reconciler does.
func TestASpecBurstWritesFewConditions(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    func(e *env) Reconciler[string]
	}{
		{"status writes that conflict", statusFromSpec},
		{"stale status writes", func(e *env) Reconciler[string] { return staleStatus(e, time.Millisecond) }},
		{"a reconcile that always fails", func(*env) Reconciler[string] {
			return Func[string](func(context.Context, string) (Result, error) { return Result{}, errBoom })
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, "App", nil)
				defer e.stop()
				rev0 := e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
				m := NewMemMetrics()
				l := mustNew(t, tt.r(e), FromStore(e.cache, e.st), WithResync(24*time.Hour, 0), WithMetrics(m), quiet())
				stop := start(t, l)
				synctest.Wait()
				burst(t, e, 1000, "a")
				time.Sleep(10 * time.Second)
				synctest.Wait()
				require.NoError(t, stop())

				n := writesBy(t, e, rev0, "test-loop")["a"]
				t.Logf("%d condition writes by the Loop, %d by the reconciler, %d Stalled counted", n,
					writesBy(t, e, rev0, "test")["a"], stalledTotal(m))
				require.LessOrEqual(t, n, 5, "condition writes by the Loop during and after the burst")
				require.LessOrEqual(t, stalledTotal(m), n, "metrics.Loop.Stalled counts conditions set, not decisions")
			})
		})
	}
}

// The stale-read shape over 10 objects: 1,000 spec updates within a second
// spread over them, and a reconciler whose writes are conditional on what
// it read from the cache. The Loop writes at most 5 conditions per object.
func TestASpecBurstOverTenObjectsWritesFewConditions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		var names []string
		rev0 := e.b.Revision()
		for i := range 10 {
			names = append(names, "o"+strconv.Itoa(i))
			e.create(t, "user", &app{Meta: store.Meta{Name: names[i]}, Spec: appSpec{Replicas: 1}})
		}
		l := mustNew(t, staleStatus(e, 10*time.Millisecond), FromStore(e.cache, e.st), WithResync(24*time.Hour, 0), WithWorkers(4), quiet())
		stop := start(t, l)
		synctest.Wait()
		burst(t, e, 1000, names...)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		require.NoError(t, stop())
		writes := writesBy(t, e, rev0, "test-loop")
		t.Logf("condition writes by the Loop: %v", writes)
		for _, name := range names {
			require.LessOrEqual(t, writes[name], 5, name)
			o := e.get(t, name)
			require.Equal(t, o.Spec.Replicas, o.Status.Replicas, "%s converged", name)
			require.False(t, conditions.IsTrue(o.Conditions, conditions.Stalled), name)
		}
	})
}

// quiet discards the Loop's log: a burst logs a thousand failures.
func quiet() Option { return WithLogger(slog.New(slog.DiscardHandler)) }

// stalledTotal is metrics.Loop.Stalled's count for Loop "test", every reason.
func stalledTotal(m *MemMetrics) int {
	n := 0
	for _, r := range []string{conditions.ReasonFailing, conditions.ReasonBlocked, conditions.ReasonTerminal, conditions.ReasonOscillating} {
		n += m.StalledCount("test", r)
	}
	return n
}

// A Requeue after a write is progress: it resets the failure count, so
// failures on either side of it do not add up to Stalled.
func TestRequeueAfterAWriteResetsFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemStatus("a")
		s := scriptFunc(nil)
		s.fn = func(ctx context.Context, _ string) (Result, error) {
			switch n := s.count("a"); {
			case n == 5:
				RecordWrite(ctx, 1)
				return Result{RequeueAfterWrite: true}, nil
			case n <= 9:
				return Result{}, errBoom
			}
			return Result{}, nil
		}
		m := NewMemMetrics()
		l := mustNew(t, s, WithConditionWriter(keySet("a"), st), append(fixedBackoff(), WithMetrics(m), quiet())...)
		stop := start(t, l)
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Equal(t, 10, s.count("a"), "4 failures, a Requeue, 4 failures, a success")
		// Before: the 5th failure in all (after the Requeue) set Stalled.
		require.Zero(t, st.writeCount(), "never 5 failures in a row: never Stalled")
		require.Zero(t, stalledTotal(m))
		require.NoError(t, stop())
	})
}

// metrics.Loop.Stalled counts conditions set, not decisions: two Loops that
// fight over a field for five minutes are each counted at most once per
// detection, although every reconcile while the report stands decides
// Stalled=Oscillating.
func TestAFightCountsStalledOncePerDetection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		var writes atomic.Int64
		ma, mb := NewMemMetrics(), NewMemMetrics()
		la, err := New("three", fighter(e, "three", 3, 250*time.Millisecond, &writes), FromStore(e.cache, e.st), append(fixedBackoff(), WithMetrics(ma), quiet())...)
		require.NoError(t, err)
		lb, err := New("two", fighter(e, "two", 2, 250*time.Millisecond, &writes), FromStore(e.cache, e.st), append(fixedBackoff(), WithMetrics(mb), quiet())...)
		require.NoError(t, err)
		stopA, stopB := start(t, la), start(t, lb)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		require.NoError(t, stopA())
		require.NoError(t, stopB())
		for _, lm := range []struct {
			name string
			m    *MemMetrics
		}{{"three", ma}, {"two", mb}} {
			found := lm.m.Oscillations(lm.name, oscillation.Fight) + lm.m.Oscillations(lm.name, oscillation.NoProgress) +
				lm.m.Oscillations(lm.name, oscillation.TooManyWrites)
			t.Logf("%s: %d detections, %d Stalled counted", lm.name, found, lm.m.StalledCount(lm.name, conditions.ReasonOscillating))
			require.LessOrEqual(t, lm.m.StalledCount(lm.name, conditions.ReasonOscillating), found, lm.name)
		}
	})
}

// The Loop's own condition writes count in the key's write budget: a
// reconciler that is Blocked and then fine, over and over, flips Stalled
// at every reconcile; after 30 writes within a minute the key is held and
// reported as oscillation.TooManyWrites, and the flapping slows down.
func TestFlappingStalledSpendsTheWriteBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		rev0 := e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		s := newScript(func(_ string, n int) (Result, error) {
			if n%2 == 0 {
				return Result{}, Blocked("Waiting", nil)
			}
			return Result{RequeueAfter: 100 * time.Millisecond}, nil
		})
		m := NewMemMetrics()
		l := mustNew(t, s, FromStore(e.cache, e.st), append(fixedBackoff(), WithMetrics(m), quiet())...)
		stop := start(t, l)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		require.NoError(t, stop())
		n := writesBy(t, e, rev0, "test-loop")["a"]
		t.Logf("%d reconciles, %d condition writes by the Loop in 5 minutes", s.count("a"), n)
		require.Positive(t, m.Oscillations("test", oscillation.TooManyWrites))
		// Before: 545 writes, one per reconcile, and no report.
		require.LessOrEqual(t, n, 5*30, "at most the budget a minute")
	})
}
