package reconcile

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

// The docs (package doc, oscillation's doc, the README's status budget): a
// key past the status budget is reported as Throttled with a Warn line,
// never with the Error line of an oscillation.
func TestThrottledIsAWarnLineNotAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		var logs logBuffer
		var writes atomic.Int64
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			n := writes.Add(1)
			if n >= spinGuard {
				return Result{}, nil
			}
			_, err := e.st.As("app").ApplyStatus(ctx, key, appStatus{Phase: "seen " + time.Now().String(), Replicas: int(n)}, nil)
			return Result{RequeueAfterWrite: true}, err
		})
		l := mustNew(t, r, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"), WithLogger(newLogger(&logs)))...)
		stop := start(t, l)
		for i := 0; l.Info().Throttled == 0; i++ {
			require.Less(t, i, 10_000, "throttled")
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
		}
		require.NoError(t, stop())
		out := logs.String()
		require.Contains(t, out, `level=WARN msg="status writes throttled"`)
		require.NotContains(t, out, "level=ERROR", out)
	})
}
