package debugpage_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/debugpage"
	"github.com/steady-go/steady/events"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// stalledFalse is a ConditionWriter whose objects say Stalled=False whatever
// the Loop writes (another Loop cleared it, or the write was refused).
type stalledFalse struct{}

func (stalledFalse) Conditions(string) ([]store.Condition, int64, bool) {
	return []store.Condition{{Type: conditions.Stalled, Status: store.ConditionFalse, Reason: conditions.ReasonRecovered}}, 1, true
}
func (stalledFalse) OwnsCondition(string, string, string) bool { return false }
func (stalledFalse) WriteCondition(context.Context, string, string, store.Condition) error {
	return nil
}

// A row never says Stalled while the object's conditions say Stalled=False.
func TestKeyViewFollowsTheObjectsStalledCondition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) {
			return reconcile.Result{}, reconcile.Terminal(errors.New("bad spec"))
		})
		src := reconcile.WithConditionWriter[string](reconcile.Keys(func() iter.Seq[string] { return slices.Values([]string{"a"}) }), stalledFalse{})
		l, err := reconcile.New("apps", r, src, reconcile.WithResync(24*time.Hour, 0))
		require.NoError(t, err)
		page := debugpage.New()
		require.NoError(t, page.AddLoop(l))
		run(t, l)
		synctest.Wait()
		ks := l.InspectAll()
		require.Len(t, ks, 1)
		require.True(t, ks[0].Stalled, "the Loop decided Stalled")
		keys := decode[[]debugpage.KeyView](t, get(t, page, "/api/keys"))
		require.Len(t, keys, 1)
		require.False(t, keys[0].Stalled, "the object says Stalled=False")
		require.Empty(t, keys[0].Reason)
	})
}

// Failures that came and went are in /api/loops, with their time; a key
// that fails says when it last failed.
func TestRecentFailuresAndLastFailureInTheAPI(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var broken atomic.Bool
		broken.Store(true)
		r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) {
			if broken.Load() {
				return reconcile.Result{}, errors.New("connection refused")
			}
			return reconcile.Result{}, nil
		})
		l := newLoop(t, "apps", r, "db-1")
		page := debugpage.New()
		require.NoError(t, page.AddLoop(l))
		run(t, l)
		synctest.Wait()
		failedAt := time.Now()
		keys := decode[[]debugpage.KeyView](t, get(t, page, "/api/keys"))
		require.Len(t, keys, 1)
		require.True(t, failedAt.Equal(keys[0].LastFailure))
		broken.Store(false)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Empty(t, decode[[]debugpage.KeyView](t, get(t, page, "/api/keys")), "idle")
		loops := decode[[]debugpage.LoopView](t, get(t, page, "/api/loops"))
		require.Len(t, loops, 1)
		require.Len(t, loops[0].RecentFailures, 1)
		require.Equal(t, "db-1", loops[0].RecentFailures[0].Key)
		require.Equal(t, "connection refused", loops[0].RecentFailures[0].Error)
		require.True(t, failedAt.Equal(loops[0].RecentFailures[0].Time))
	})
}

// /api/events serves the recorder's recent events, and an object's stored
// ones.
func TestEventsAPI(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		require.Empty(t, decode[debugpage.EventsView](t, get(t, debugpage.New(), "/api/events")).Events)
		rec, err := events.New(memstore.New())
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- rec.Run(ctx) }()
		defer func() { cancel(); require.NoError(t, <-done) }()
		rec.Record(events.Event{Kind: "App", Name: "web", Type: events.Warning, Reason: "Failed", Message: "boom"})
		rec.Record(events.Event{Kind: "App", Name: "db", Reason: "Scaled"})
		synctest.Wait()
		page := debugpage.New(debugpage.WithEvents(rec))
		recent := decode[debugpage.EventsView](t, get(t, page, "/api/events"))
		require.Len(t, recent.Events, 2)
		require.Equal(t, "Scaled", recent.Events[0].Reason, "newest first")
		require.Equal(t, int64(2), recent.Stats.Written)
		web := decode[debugpage.EventsView](t, get(t, page, "/api/events?kind=App&name=web"))
		require.Len(t, web.Events, 1)
		require.Equal(t, "boom", web.Events[0].Message)
	})
}
