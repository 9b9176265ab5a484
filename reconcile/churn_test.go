package reconcile

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// Conditions change only when their meaning changes. An object that fails
// for an hour at the backoff cap is written by the Loop once, when it
// becomes Stalled: the message holds no failure count (Inspect, metrics and
// logs carry it), and an error whose text changes from one attempt to the
// next does not rewrite a condition whose status and reason stand.
func TestAnHourOfFailuresAtTheCapWritesStalledOnce(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  func(n int) error
	}{
		{"same error", func(int) error { return errBoom }},
		{"changing text", func(n int) error { return fmt.Errorf("attempt %d: %w", n, errBoom) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, "App", nil)
				defer e.stop()
				rev0 := e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
				s := newScript(func(_ string, n int) (Result, error) { return Result{}, tt.err(n) })
				l := mustNew(t, s, FromStore(e.cache, e.st), fixedBackoff()...)
				stop := start(t, l)
				time.Sleep(time.Hour)
				synctest.Wait()
				require.Greater(t, s.count("a"), 55, "an hour of failures, most at the 1m cap")
				o := e.get(t, "a")
				// The store holds this one object: its revision counts the writes.
				// Before: 56 writes (the count in the message changed each time).
				require.LessOrEqual(t, o.Meta.Revision-rev0, int64(2), "writes of the object by the Loop")
				c := stalledOf(t, e, "a")
				require.Equal(t, conditions.ReasonFailing, c.Reason)
				require.Equal(t, "test: "+tt.err(4).Error(), c.Message, "no counter: the error that made it Stalled")
				require.Equal(t, s.count("a"), l.Inspect("a").Failures, "the count is in Inspect")
				require.NoError(t, stop())
			})
		})
	}
}

func stalledOf(t *testing.T, e *env, name string) store.Condition {
	t.Helper()
	c, ok := conditions.Get(e.get(t, name).Conditions, conditions.Stalled)
	require.True(t, ok, "Stalled is set")
	return c
}
