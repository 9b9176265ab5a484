package reconcile

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	history "github.com/steady-go/steady/events"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// The Loop records a key's first failure, its move to Stalled and a pause
// as events of the object, and a reconciler records its own with Event;
// each carries the reconcile's ID.
func TestLoopRecordsEventsOfItsObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		rec, err := history.New(e.b)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { _ = rec.Run(ctx) })
		defer func() { cancel(); wg.Wait() }()

		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
		e.create(t, "user", &app{Meta: store.Meta{Name: "bad"}})
		e.create(t, "user", &app{Meta: store.Meta{Name: "p", Annotations: map[string]string{pausedAnnotation: "true"}}})
		var mu sync.Mutex
		var aID string
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			if key == "bad" {
				return Result{}, errors.New("boom")
			}
			mu.Lock()
			aID = ReconcileID(ctx)
			mu.Unlock()
			history.Emit(ctx, history.Normal, "Scaled", "to 3")
			return Result{}, nil
		})
		l, err := New("apps", r, FromStore(e.cache, e.st), append(fixedBackoff(), WithStallAfter(2), WithEvents(rec))...)
		require.NoError(t, err)
		stop := start(t, l)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.NoError(t, stop())

		reasons := func(name string) map[string]history.Event {
			evs, err := rec.For(context.Background(), "App", name)
			require.NoError(t, err)
			out := map[string]history.Event{}
			for _, ev := range evs {
				out[ev.Reason] = ev
			}
			return out
		}
		bad := reasons("bad")
		require.Contains(t, bad, "ReconcileFailed")
		require.Equal(t, 1, bad["ReconcileFailed"].Count, "the first failure, not every retry")
		require.Equal(t, history.Warning, bad["ReconcileFailed"].Type)
		require.Equal(t, "boom", bad["ReconcileFailed"].Message)
		require.Contains(t, bad, conditions.ReasonFailing, "the move to Stalled")
		require.Equal(t, "apps", bad[conditions.ReasonFailing].Source)
		a := reasons("a")
		require.Equal(t, "to 3", a["Scaled"].Message)
		mu.Lock()
		require.Equal(t, aID, a["Scaled"].ReconcileID)
		mu.Unlock()
		require.Equal(t, e.get(t, "a").Meta.UID, a["Scaled"].UID)
		require.Contains(t, reasons("p"), "Paused")
	})
}
