package reconcile

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// The package doc: "A change to Stalled alone is never a hint for any
// Loop: it is a report, not an input." A Stalled written by one Loop's
// manager does not run that Loop's key, nor another Loop's of the kind.
func TestStalledAloneIsNoHintForAnyLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		other := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l, err := New("apps", s, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"))...)
		require.NoError(t, err)
		stop := start(t, l)
		lo, err := New("audit", other, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("audit"))...)
		require.NoError(t, err)
		stopOther := start(t, lo)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"))
		require.Equal(t, 1, other.count("a"))

		o := e.get(t, "a")
		o.Conditions = []store.Condition{{Type: conditions.Stalled, Status: store.ConditionTrue, Reason: conditions.ReasonFailing, Message: "apps: boom"}}
		_, err = e.st.As("app-loop").UpdateStatus(context.Background(), o) // as the first Loop writes it
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"), "its own Stalled is no hint")
		require.Equal(t, 1, other.count("a"), "another Loop's Stalled is no hint")
		require.NoError(t, stopOther())
		require.NoError(t, stop())
	})
}
