package reconcile

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// An object annotated steady.dev/paused=true is not reconciled: the Loop
// sets Paused=True on it instead, once. Removing the annotation resumes
// it: Paused becomes False and the next reconcile runs.
func TestPausedObjectIsNotReconciledUntilTheMarkIsRemoved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a", Annotations: map[string]string{pausedAnnotation: "true"}}})
		e.create(t, "user", &app{Meta: store.Meta{Name: "b"}})
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l, err := New("apps", s, FromStore(e.cache, e.st), fixedBackoff()...)
		require.NoError(t, err)
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 0, s.count("a"), "a paused object is not reconciled")
		require.Equal(t, 1, s.count("b"))
		c, ok := conditions.Get(e.get(t, "a").Conditions, conditions.Paused)
		require.True(t, ok, "the Loop says the object is paused")
		require.Equal(t, store.ConditionTrue, c.Status)
		require.Equal(t, reasonPaused, c.Reason)
		rev := e.get(t, "a").Meta.Revision

		l.Add("a") // hints and resync do not run it either, nor rewrite Paused
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, 0, s.count("a"))
		require.Equal(t, rev, e.get(t, "a").Meta.Revision, "Paused is written once")

		o := e.get(t, "a")
		delete(o.Meta.Annotations, pausedAnnotation)
		_, err = e.st.As("user").Update(context.Background(), o)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"), "removing the mark resumes it")
		c, _ = conditions.Get(e.get(t, "a").Conditions, conditions.Paused)
		require.Equal(t, store.ConditionFalse, c.Status)
		require.Equal(t, reasonResumed, c.Reason)
		require.NoError(t, stop())
	})
}

// Only "true" pauses (as crossplane's crossplane.io/paused): "false" or
// an empty value does not.
func TestPausedAnnotationOtherValuesDoNotPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "f", Annotations: map[string]string{pausedAnnotation: "false"}}})
		e.create(t, "user", &app{Meta: store.Meta{Name: "e", Annotations: map[string]string{pausedAnnotation: ""}}})
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l, err := New("apps", s, FromStore(e.cache, e.st), fixedBackoff()...)
		require.NoError(t, err)
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, s.count("f"))
		require.Equal(t, 1, s.count("e"))
		_, ok := conditions.Get(e.get(t, "f").Conditions, conditions.Paused)
		require.False(t, ok)
		require.NoError(t, stop())
	})
}
