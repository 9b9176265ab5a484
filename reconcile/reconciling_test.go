package reconcile

import (
	"context"
	"errors"
	"iter"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// kstatusApp is a reconciler as the README writes one, driven by the
// spec's Image: "block" waits for gate (once) and then goes on, "fail"
// fails, anything else applies Ready=True at the generation it read. It
// keeps the conditions each reconcile read from the cache.
type kstatusApp struct {
	e     *env
	gate  chan struct{}
	mu    sync.Mutex
	seen  []store.Condition
	calls int
}

func (a *kstatusApp) Reconcile(ctx context.Context, key string) (Result, error) {
	o, ok := a.e.cache.Get(key)
	if !ok {
		return Result{}, nil
	}
	a.mu.Lock()
	a.seen = o.Conditions
	a.calls++
	a.mu.Unlock()
	switch o.Spec.Image {
	case "block":
		<-a.gate
	case "fail":
		return Result{}, errors.New("dependency unreachable")
	}
	ready := store.Condition{Type: conditions.Ready, Status: store.ConditionTrue, Reason: "Running", ObservedGeneration: o.Meta.Generation}
	_, err := a.e.st.As("app").ApplyStatus(ctx, key, nil, []store.Condition{ready}, store.WithObserved(o.Meta))
	return Result{}, store.IgnoreNotFound(err)
}

func (a *kstatusApp) lastSeen() []store.Condition {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seen
}

func requireCondition(t *testing.T, conds []store.Condition, typ string, status store.ConditionStatus, reason string, gen int64) {
	t.Helper()
	c, ok := conditions.Get(conds, typ)
	require.True(t, ok, "%s is set: %v", typ, conds)
	require.Equal(t, status, c.Status, "%s: %v", typ, conds)
	require.Equal(t, reason, c.Reason, "%s: %v", typ, conds)
	require.Equal(t, gen, c.ObservedGeneration, "%s: %v", typ, conds)
}

// The Loop keeps Reconciling as kstatus reads it. A new object whose
// first reconcile fails is Reconciling=True while it is retried, False
// once a reconcile succeeded. A later generation shows as an observed
// generation behind (Ready's), with no write by the Loop, until Ready or
// Stalled observe it. A reconcile of an object whose generation is
// observed writes nothing.
func TestReconcilingFollowsTheGenerationTheLoopWorksOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Image: "fail"}})
		a := &kstatusApp{e: e}
		l, err := New("apps", a, FromStore(e.cache, e.st),
			append(fixedBackoff(), WithFieldManager("app"), WithStallAfter(2), quiet())...)
		require.NoError(t, err)
		stop := start(t, l)
		synctest.Wait()

		// A new object, its first reconcile failed: retried, and read so.
		requireCondition(t, e.get(t, "a").Conditions, conditions.Reconciling, store.ConditionTrue, reasonProgressing, 0)
		o := e.get(t, "a")
		o.Spec.Image = ""
		_, err = e.st.As("user").Update(ctx, o)
		require.NoError(t, err)
		synctest.Wait()
		requireCondition(t, a.lastSeen(), conditions.Reconciling, store.ConditionTrue, reasonProgressing, 0)
		conds := e.get(t, "a").Conditions
		requireCondition(t, conds, conditions.Reconciling, store.ConditionFalse, reasonReconciled, 0)
		requireCondition(t, conds, conditions.Ready, store.ConditionTrue, "Running", 2)

		// Reconciles of an observed generation write nothing.
		rev := e.get(t, "a").Meta.Revision
		for range 3 {
			l.Add("a")
			synctest.Wait()
		}
		require.Equal(t, 5, a.count(), "the hints ran")
		require.Equal(t, rev, e.get(t, "a").Meta.Revision, "no write for an unchanged object")

		// A new generation that fails: behind until Stalled observes it.
		o = e.get(t, "a")
		o.Spec.Image = "fail"
		_, err = e.st.As("user").Update(ctx, o)
		require.NoError(t, err)
		synctest.Wait()
		conds = e.get(t, "a").Conditions
		requireCondition(t, conds, conditions.Reconciling, store.ConditionFalse, reasonReconciled, 0)
		requireCondition(t, conds, conditions.Ready, store.ConditionTrue, "Running", 2)
		_, stalled := conditions.Get(conds, conditions.Stalled)
		require.False(t, stalled, "one failure is not Stalled")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		conds = e.get(t, "a").Conditions
		requireCondition(t, conds, conditions.Stalled, store.ConditionTrue, conditions.ReasonFailing, 3)
		requireCondition(t, conds, conditions.Reconciling, store.ConditionFalse, reasonReconciled, 0)

		// Fixed: the next generation is worked on, then reconciled.
		o = e.get(t, "a")
		o.Spec.Image = ""
		_, err = e.st.As("user").Update(ctx, o)
		require.NoError(t, err)
		synctest.Wait()
		conds = e.get(t, "a").Conditions
		requireCondition(t, conds, conditions.Reconciling, store.ConditionFalse, reasonReconciled, 0)
		requireCondition(t, conds, conditions.Stalled, store.ConditionFalse, conditions.ReasonRecovered, 4)
		requireCondition(t, conds, conditions.Ready, store.ConditionTrue, "Running", 4)
		require.NoError(t, stop())
	})
}

// A new object costs the Loop no Reconciling write when its first
// reconcile succeeds: what the reconciler wrote (Ready at the generation it
// read) is what kstatus reads. One whose first reconcile fails is set
// Reconciling=True after it, so that kstatus reads it InProgress, not
// Current, while the Loop retries it; the retry reads it so, and the first
// success sets it False.
func TestReconcilingIsWrittenOnlyAfterAFirstReconcileThatFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, "App", nil)
		defer e.stop()
		rev0 := e.b.Revision()
		e.create(t, "user", &app{Meta: store.Meta{Name: "ok"}})
		e.create(t, "user", &app{Meta: store.Meta{Name: "bad"}, Spec: appSpec{Image: "fail"}})
		a := &kstatusApp{e: e}
		l, err := New("apps", a, FromStore(e.cache, e.st),
			append(fixedBackoff(), WithFieldManager("app"), WithStallAfter(3), quiet())...)
		require.NoError(t, err)
		stop := start(t, l)
		synctest.Wait()

		conds := e.get(t, "ok").Conditions
		_, has := conditions.Get(conds, conditions.Reconciling)
		require.False(t, has, "a first reconcile that succeeds leaves no Reconciling: %v", conds)
		requireCondition(t, conds, conditions.Ready, store.ConditionTrue, "Running", 1)
		require.Zero(t, writesBy(t, e, rev0, "app-loop")["ok"], "no Loop write on an object whose first reconcile succeeded")

		requireCondition(t, e.get(t, "bad").Conditions, conditions.Reconciling, store.ConditionTrue, reasonProgressing, 0)
		time.Sleep(time.Second) // the retry
		synctest.Wait()
		requireCondition(t, a.lastSeen(), conditions.Reconciling, store.ConditionTrue, reasonProgressing, 0)

		o := e.get(t, "bad")
		o.Spec.Image = ""
		_, err = e.st.As("user").Update(ctx, o)
		require.NoError(t, err)
		synctest.Wait()
		conds = e.get(t, "bad").Conditions
		requireCondition(t, conds, conditions.Reconciling, store.ConditionFalse, reasonReconciled, 0)
		requireCondition(t, conds, conditions.Ready, store.ConditionTrue, "Running", 2)
		require.Equal(t, 2, writesBy(t, e, rev0, "app-loop")["bad"], "True after the failure, False after the success")
		require.NoError(t, stop())
	})
}

func (a *kstatusApp) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls
}

// Each of the Loop's condition writes keeps the Loop's other conditions:
// an apply declares the manager's whole set, and one of Paused alone
// would drop the Loop's Stalled.
func TestLoopConditionWritesKeepTheLoopsOtherConditions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Image: "fail"}})
		a := &kstatusApp{e: e}
		l, err := New("apps", a, FromStore(e.cache, e.st),
			append(fixedBackoff(), WithFieldManager("app"), WithStallAfter(2), quiet())...)
		require.NoError(t, err)
		stop := start(t, l)
		synctest.Wait()
		time.Sleep(time.Second) // the second failure sets Stalled
		synctest.Wait()
		requireCondition(t, e.get(t, "a").Conditions, conditions.Stalled, store.ConditionTrue, conditions.ReasonFailing, 1)

		o := e.get(t, "a")
		o.Meta.Annotations = map[string]string{pausedAnnotation: "true"}
		_, err = e.st.As("user").Update(ctx, o)
		require.NoError(t, err)
		time.Sleep(time.Minute)
		synctest.Wait()
		conds := e.get(t, "a").Conditions
		requireCondition(t, conds, conditions.Paused, store.ConditionTrue, reasonPaused, 1)
		requireCondition(t, conds, conditions.Stalled, store.ConditionTrue, conditions.ReasonFailing, 1)
		requireCondition(t, conds, conditions.Reconciling, store.ConditionFalse, reasonStalled, 0)
		require.NoError(t, stop())
	})
}

// What Reconciling costs in writes, counted in the store's history: none
// for a new object whose first reconcile succeeds (two at most in an
// object's life: True after a first reconcile that failed, False after a
// success), none for a reconcile of an unchanged object nor for a new
// generation. The reconciler's own writes are the same with or without it.
func TestReconcilingWritesPerReconcile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, "App", nil)
		defer e.stop()
		const objects, hints, gens = 10, 20, 5
		rev0 := e.b.Revision()
		var names []string
		for i := range objects {
			names = append(names, "o"+string(rune('a'+i)))
			e.create(t, "user", &app{Meta: store.Meta{Name: names[i]}})
		}
		a := &kstatusApp{e: e}
		l, err := New("apps", a, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"), quiet())...)
		require.NoError(t, err)
		stop := start(t, l)
		synctest.Wait()
		count := func(since int64) (loop, app, reconciles int) {
			for _, n := range writesBy(t, e, since, "app-loop") {
				loop += n
			}
			for _, n := range writesBy(t, e, since, "app") {
				app += n
			}
			return loop, app, a.count()
		}
		loop, app, n := count(rev0)
		t.Logf("first reconciles: %d reconciles, %d Loop writes, %d reconciler writes", n, loop, app)
		require.Zero(t, loop, "no Loop write for a new object whose first reconcile succeeds")
		require.Equal(t, objects, app)

		rev1, n0 := e.b.Revision(), a.count()
		for range hints {
			for _, name := range names {
				l.Add(name)
			}
			synctest.Wait()
		}
		loop, app, n = count(rev1)
		t.Logf("unchanged: %d reconciles, %d Loop writes, %d reconciler writes", n-n0, loop, app)
		require.Equal(t, objects*hints, n-n0)
		require.Zero(t, loop+app, "a reconcile of an unchanged object writes nothing")

		rev2, n0 := e.b.Revision(), a.count()
		for g := range gens {
			for _, name := range names {
				o := e.get(t, name)
				o.Spec.Replicas = g + 1
				_, err := e.st.As("user").Update(ctx, o)
				require.NoError(t, err)
			}
			synctest.Wait()
		}
		loop, app, n = count(rev2)
		t.Logf("new generations: %d reconciles, %d Loop writes, %d reconciler writes", n-n0, loop, app)
		require.Zero(t, loop, "a new generation costs the Loop no write")
		require.Equal(t, objects*gens, app)
		require.NoError(t, stop())
	})
}

// A reconciler that keeps its own Reconciling keeps it: the Loop writes
// none on an object that has one, and changes none it does not own.
func TestReconcilingOfTheReconcilerIsLeftAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		mine := store.Condition{Type: conditions.Reconciling, Status: store.ConditionTrue, Reason: "Mine"}
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Conditions: []store.Condition{mine}, Spec: appSpec{Image: "fail"}})
		l, err := New("apps", &kstatusApp{e: e}, FromStore(e.cache, e.st),
			append(fixedBackoff(), WithFieldManager("app"), WithStallAfter(1), quiet())...)
		require.NoError(t, err)
		stop := start(t, l)
		synctest.Wait()
		conds := e.get(t, "a").Conditions
		requireCondition(t, conds, conditions.Stalled, store.ConditionTrue, conditions.ReasonFailing, 1)
		requireCondition(t, conds, conditions.Reconciling, store.ConditionTrue, "Mine", 0)
		require.NoError(t, stop())
	})
}

// The Loop's Reconciling writes are never a hint, for it or another Loop
// of the kind.
func TestReconcilingIsNoHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		other := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l, err := New("apps", s, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"))...)
		require.NoError(t, err)
		stop := start(t, l)
		synctest.Wait()
		_, has := conditions.Get(e.get(t, "a").Conditions, conditions.Reconciling)
		require.False(t, has, "a first reconcile that succeeded writes no Reconciling")
		lo, err := New("audit", other, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("audit"))...)
		require.NoError(t, err)
		stopOther := start(t, lo)
		synctest.Wait()
		o := e.get(t, "a")
		o.Conditions = []store.Condition{{Type: conditions.Reconciling, Status: store.ConditionTrue, Reason: "Progressing"}}
		_, err = e.st.As("app-loop").UpdateStatus(context.Background(), o) // as the first Loop writes it
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"))
		require.Equal(t, 1, other.count("a"), "another Loop's Reconciling is no hint")
		require.NoError(t, stopOther())
		require.NoError(t, stop())
	})
}

// The Loop judges Reconciling on the object its cache holds: a key whose
// object the cache does not hold (outside its selection here; or not yet
// seen) is reconciled without a Reconciling write on the stored object.
func TestReconcilingIsNotWrittenOnAnObjectTheCacheDoesNotHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil, cache.WithSelector(nil, cache.FieldSelector{NamePrefix: "in-"}))
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "in-a"}})
		e.create(t, "user", &app{Meta: store.Meta{Name: "out-b"}})
		// Failing first reconciles: the Loop would set Reconciling=True on both.
		s := newScript(func(string, int) (Result, error) { return Result{}, errors.New("not yet") })
		src := Sources(FromStore(e.cache, e.st), Keys(func() iter.Seq[string] { return slices.Values([]string{"out-b"}) }))
		l, err := New("apps", s, src, append(fixedBackoff(), quiet())...)
		require.NoError(t, err)
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, s.count("in-a"))
		require.Equal(t, 1, s.count("out-b"))
		requireCondition(t, e.get(t, "in-a").Conditions, conditions.Reconciling, store.ConditionTrue, reasonProgressing, 0)
		require.Empty(t, e.get(t, "out-b").Conditions, "no Reconciling on an object the cache does not hold")
		require.NoError(t, stop())
	})
}

// Whether an object is new is judged on the object the cache held before
// the reconcile, not the one it holds after: a first reconcile that
// writes an observed Ready=False, sees it in the cache, and fails leaves
// Reconciling=True all the same, however fast the cache is.
func TestReconcilingJudgesTheObjectAsItWasBeforeTheReconcile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
		var calls int
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			calls++
			if calls > 1 {
				return Result{}, nil
			}
			o, _ := e.cache.Get(key)
			notReady := store.Condition{Type: conditions.Ready, Status: store.ConditionFalse, Reason: "Waiting", ObservedGeneration: o.Meta.Generation}
			res, err := e.st.As("app").ApplyStatus(ctx, key, nil, []store.Condition{notReady}, store.WithObserved(o.Meta))
			require.NoError(t, err)
			require.NoError(t, e.cache.WaitFor(ctx, res.Revision))
			return Result{}, errors.New("dependency unreachable")
		})
		l, err := New("apps", r, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"), quiet())...)
		require.NoError(t, err)
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, calls)
		conds := e.get(t, "a").Conditions
		requireCondition(t, conds, conditions.Reconciling, store.ConditionTrue, reasonProgressing, 0)
		requireCondition(t, conds, conditions.Ready, store.ConditionFalse, "Waiting", 1)
		require.NoError(t, stop())
	})
}
