package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// The judge skips the field-level judgement of another writer's change,
// unless Stalled changed (for a key its Loop keeps state for, the judgement
// is made after the verdict, for the oscillation detector alone). It must
// give the verdict the full judgement gives: another writer's change is a
// hint unless every path the field-level diff finds is under Stalled or
// Reconciling; the Loop's own changes take the full way for both Loops.
func TestJudgeSkipsAnotherWritersChangeOnlyWhereTheVerdictIsTheSame(t *testing.T) {
	ctx := context.Background()
	st, err := store.New[appSpec, appStatus](memstore.New(), "App")
	require.NoError(t, err)
	src := FromStore(cache.New[appSpec, appStatus](st), st).(storeSource[appSpec, appStatus])
	newLoop := func() *Loop[string] {
		l, err := New("app", Func[string](func(context.Context, string) (Result, error) { return Result{}, nil }), src)
		require.NoError(t, err)
		return l
	}
	fresh, kept := newLoop(), newLoop()
	kept.observeWrite("a", oscillation.Write{Self: true, Time: time.Now()})
	require.True(t, kept.keepsState("a"))

	_, err = st.As("user").Create(ctx, &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
	require.NoError(t, err)
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	writes := []struct {
		name  string
		write func(o *app) error
	}{
		{"user spec", func(o *app) error { o.Spec.Replicas++; _, err := st.As("user").Update(ctx, o); return err }},
		{"user label", func(o *app) error {
			o.Meta.Labels = map[string]string{"x": o.Spec.Image + "1"}
			_, err := st.As("user").Update(ctx, o)
			return err
		}},
		{"app status", func(o *app) error {
			o.Status.Phase = "Running"
			_, err := st.As("app").UpdateStatus(ctx, o)
			return err
		}},
		{"other status", func(o *app) error { o.Status.Replicas++; _, err := st.As("other").UpdateStatus(ctx, o); return err }},
		{"other sets Stalled", func(o *app) error {
			_, err := st.As("other").ApplyStatus(ctx, "a", nil, []store.Condition{{Type: conditions.Stalled, Status: store.ConditionTrue, LastTransitionTime: at}}, store.WithForce())
			return err
		}},
		{"app sets Stalled", func(o *app) error {
			_, err := st.As("app").ApplyStatus(ctx, "a", nil, []store.Condition{{Type: conditions.Stalled, Status: store.ConditionFalse, LastTransitionTime: at}}, store.WithForce())
			return err
		}},
		{"other changes Stalled and Ready", func(o *app) error {
			_, err := st.As("other").ApplyStatus(ctx, "a", nil, []store.Condition{
				{Type: conditions.Stalled, Status: store.ConditionTrue, LastTransitionTime: at},
				{Type: conditions.Ready, Status: store.ConditionTrue, LastTransitionTime: at},
			}, store.WithForce())
			return err
		}},
		{"user spec again", func(o *app) error { o.Spec.Image = "web:2"; _, err := st.As("user").Update(ctx, o); return err }},
	}
	skipped := 0
	for _, w := range writes {
		old, err := st.Get(ctx, "a")
		require.NoError(t, err)
		o := *old
		require.NoError(t, w.write(&o), w.name)
		new, err := st.Get(ctx, "a")
		require.NoError(t, err)
		if new.Meta.LastWrite.Manager != "app" && !fresh.keepsState("a") {
			skipped++
		}
		require.Equal(t, src.judge(kept, old, new), src.judge(fresh, old, new), w.name)
		if new.Meta.LastWrite.Manager != "app" {
			owned, foreign := st.FieldChanges(old, new, "app")
			require.Equal(t, !onlyStalled(owned, foreign), src.judge(fresh, old, new), w.name)
		}
	}
	require.Positive(t, skipped, "some changes take the skip")
}

// judge is what the source decides of a modification, with the deferred
// field-level judgement made at once: whether it is a hint for loop (an own
// write that hints every key but its author's counts as none), as
// TestJudgeSkipsAnotherWritersChangeOnlyWhereTheVerdictIsTheSame and
// BenchmarkJudge ask it of one event.
func (s *cacheSource[S, T]) judge(loop loopHooks, old, new *store.Object[S, T]) bool {
	j := s.judgeLater(loop, old, new)
	s.flushLocked()
	return j.hint && !j.excepting
}
