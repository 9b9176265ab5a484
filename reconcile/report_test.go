package reconcile

import (
	"context"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

// An oscillation is reported when it is detected, not when the hold ends:
// a label write before every Requeue spends the write budget, the key is
// held, and the object carries Stalled=Oscillating within 5 seconds of the
// detection, while the hold still lasts.
func TestTooManyWritesIsReportedWhileHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		var n int
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			n++
			if n >= spinGuard {
				return Result{}, nil
			}
			err := labelStorm(ctx, e, "test", key, n)
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
		time.Sleep(time.Second)
		synctest.Wait()
		info := l.Inspect("a")
		require.True(t, info.HeldUntil.After(time.Now()), "held")
		c, ok := conditions.Get(e.get(t, "a").Conditions, conditions.Stalled)
		// Before: no Stalled condition until the hold ended, 10s after.
		require.True(t, ok && c.Status == store.ConditionTrue, "Stalled stored %v after the detection, while held until %v",
			time.Since(detected), info.HeldUntil.Sub(detected))
		require.Equal(t, conditions.ReasonOscillating, c.Reason)
		require.Contains(t, c.Message, "too many writes: ")
		require.NoError(t, stop())
	})
}

// labelStorm writes a new label value as manager, the way a status storm
// did before status writes got a budget of their own: a write of more than
// the status side, so it spends MaxWrites (give the Loop a NoProgress
// threshold above it, or NoProgress is found first).
func labelStorm(ctx context.Context, e *env, manager, key string, n int) error {
	_, err := e.st.As(manager).Apply(ctx, key, map[string]any{}, store.WithMeta(store.ApplyMeta{Labels: map[string]string{"n": strconv.Itoa(n)}}))
	return err
}

// noProgressOff keeps NoProgress out of the way of the write budget.
func noProgressOff() Option {
	return WithOscillation(oscillation.Config{NoProgressWrites: 1_000_000})
}
