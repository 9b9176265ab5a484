package reconcile

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

// lingerBound is how long after the report's end (one window after the
// hold ends) a healthy object may still carry Stalled=Oscillating.
const lingerBound = 5 * time.Second

// requireReportEnds waits, from the detection, out the hold, one window
// and lingerBound, and requires the object to carry a Stalled=False of the
// Loop's by then, with resync a day away: a report that ends only when a
// hint or the resync comes stands for a day. It returns the object's
// revision then.
func requireReportEnds(t *testing.T, e *env, l *Loop[string], detected time.Time) int64 {
	t.Helper()
	info := l.Inspect("a")
	require.NotNil(t, info.Oscillation, "the oscillation is known")
	require.True(t, info.HeldUntil.After(detected), "held")
	deadline := info.HeldUntil.Add(l.cfg.osc.Window + lingerBound)
	time.Sleep(time.Until(deadline))
	synctest.Wait()
	o := e.get(t, "a")
	c, ok := conditions.Get(o.Conditions, conditions.Stalled)
	require.True(t, ok, "Stalled was written")
	require.Equal(t, store.ConditionFalse, c.Status,
		"Stalled=%s (%s) %v after the detection: the hold ended at +%v, the report at +%v",
		c.Status, c.Reason, time.Since(detected), info.HeldUntil.Sub(detected), info.HeldUntil.Add(l.cfg.osc.Window).Sub(detected))
	require.Equal(t, conditions.ReasonRecovered, c.Reason)
	require.Nil(t, l.Inspect("a").Oscillation, "the report is over")
	return o.Meta.Revision
}

// requireQuiet requires a healthy object to be written no more for an hour:
// the clear does not spin.
func requireQuiet(t *testing.T, e *env, rev int64) {
	t.Helper()
	time.Sleep(time.Hour)
	synctest.Wait()
	require.Equal(t, rev, e.get(t, "a").Meta.Revision, "no write once the report is cleared")
	require.Equal(t, store.ConditionFalse, stalledOf(t, e, "a").Status)
}

// A real fight that stops: the other writer goes away after the detection.
// The object is healthy from the hold's end on, and the Loop clears its
// Stalled=Oscillating once the report's window is over, though no hint
// comes and resync is a day away, with at most two writes of its own.
func TestOscillationReportEndsAfterAFightStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		var writes atomic.Int64
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			cached, ok := e.cache.Get(key)
			if !ok || cached.Spec.Replicas == 3 {
				return Result{}, nil
			}
			o := copyOf(cached)
			o.Spec.Replicas = 3
			_, err := e.st.As("three").Update(ctx, o)
			if err == nil {
				writes.Add(1)
			}
			return Result{}, store.IgnoreNotFound(ignoreConflict(err))
		})
		m := NewMemMetrics()
		l := mustNew(t, r, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("three"), WithMetrics(m), quiet())...)
		stop := start(t, l)

		// The other writer sets 2 whenever it sees another value, until
		// it goes away.
		ctx, cancel := context.WithCancel(context.Background())
		var other sync.WaitGroup
		other.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(200 * time.Millisecond):
				}
				if o, ok := e.cache.Get("a"); ok && o.Spec.Replicas != 2 {
					o = copyOf(o)
					o.Spec.Replicas = 2
					_, _ = e.st.As("two").Update(ctx, o)
				}
			}
		})
		for i := 0; m.Oscillations("test", oscillation.Fight) == 0; i++ {
			require.Less(t, i, 1000, "the fight is detected")
			time.Sleep(50 * time.Millisecond)
			synctest.Wait()
		}
		detected := time.Now()
		cancel()
		other.Wait()
		// The other writer has the last word, during the hold, and leaves.
		o := copyOf(e.get(t, "a"))
		o.Spec.Replicas = 2
		_, err := e.st.As("two").Update(context.Background(), o)
		require.NoError(t, err)
		synctest.Wait()
		rev0, w0 := e.get(t, "a").Meta.Revision, writes.Load()
		require.Equal(t, conditions.ReasonOscillating, stalledOf(t, e, "a").Reason, "reported at detection")

		rev := requireReportEnds(t, e, l, detected)
		t.Logf("%d writes after the other writer left, %d of them the reconciler's", rev-rev0, writes.Load()-w0)
		require.Equal(t, int64(1), writes.Load()-w0, "one re-set of the fought field, at the hold's end")
		require.Equal(t, 3, e.get(t, "a").Spec.Replicas)
		require.Equal(t, int64(2), rev-rev0, "two writes after the fight: the re-set and the clear")
		requireQuiet(t, e, rev)
		require.NoError(t, stop())
	})
}

// A write storm that ends: a status written before every Requeue spends
// the write budget (TooManyWrites), then the reconciler settles. The Loop
// clears Stalled=Oscillating once the report's window is over, with
// resync a day away.
func TestOscillationReportEndsAfterAWriteStormEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		var storm atomic.Bool
		storm.Store(true)
		var n atomic.Int64
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			if !storm.Load() {
				return Result{}, nil
			}
			k := n.Add(1)
			err := labelStorm(ctx, e, "test", key, int(k))
			return Result{RequeueAfterWrite: true}, err
		})
		m := NewMemMetrics()
		l := mustNew(t, r, FromStore(e.cache, e.st), append(fixedBackoff(), WithMetrics(m), quiet(), noProgressOff())...)
		stop := start(t, l)
		for i := 0; m.Oscillations("test", oscillation.TooManyWrites) == 0; i++ {
			require.Less(t, i, 1000, "the write budget is spent")
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
		}
		detected := time.Now()
		storm.Store(false)
		synctest.Wait()
		rev0 := e.get(t, "a").Meta.Revision
		require.Equal(t, conditions.ReasonOscillating, stalledOf(t, e, "a").Reason, "reported at detection")

		rev := requireReportEnds(t, e, l, detected)
		t.Logf("%d writes after the storm ended", rev-rev0)
		require.Equal(t, int64(1), rev-rev0, "one write after the storm: the clear")
		requireQuiet(t, e, rev)
		require.NoError(t, stop())
	})
}

// A healthy object marked Stalled=Oscillating by mistake (a detection fed
// writes that did not happen, as a misattributed relist once did) gets its
// report cleared the same way: the object writes nothing, no hint comes,
// and resync is a day away.
func TestWrongOscillationReportOfAHealthyObjectEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		s := scriptFunc(func(context.Context, string) (Result, error) { return Result{}, nil })
		m := NewMemMetrics()
		l := mustNew(t, s, FromStore(e.cache, e.st), append(fixedBackoff(), WithMetrics(m), quiet())...)
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"))
		rev0 := e.get(t, "a").Meta.Revision

		replicas := []diff.Path{diff.MustParsePath(".spec.replicas")}
		l.observeWrite("a", oscillation.Write{Self: true, Owned: replicas})
		for range l.cfg.osc.FightWrites {
			l.observeWrite("a", oscillation.Write{Foreign: replicas})
			l.observeWrite("a", oscillation.Write{Self: true, Owned: replicas})
		}
		require.Equal(t, 1, m.Oscillations("test", oscillation.Fight))
		detected := time.Now()
		synctest.Wait()
		require.Equal(t, conditions.ReasonOscillating, stalledOf(t, e, "a").Reason, "reported at detection")

		rev := requireReportEnds(t, e, l, detected)
		require.Equal(t, rev0+2, rev, "two writes: the report and its clear")
		require.Equal(t, 3, s.count("a"), "the first run, one at the hold's end, and one when the report ends")
		requireQuiet(t, e, rev)
		require.NoError(t, stop())
	})
}
