package reconcile

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

type spanKey struct{}

// A store's trace inject (WithTraceContext) that assumes every ctx carries
// a span panics on the Loop's own condition writes, which run on a worker
// outside any reconcile. The write goes on without a trace, the panic is
// logged with its stack, and the Loop keeps working. It used to crash the
// process from the worker's goroutine.
func TestTraceInjectThatPanicsOnTheLoopsOwnWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := memstore.New()
		var logs logBuffer
		inject := func(ctx context.Context) string {
			return *ctx.Value(spanKey{}).(*string) // no span: a nil interface conversion panics
		}
		st, err := store.New[appSpec, appStatus](b, "App", store.WithTraceContext(inject), store.WithLogger(newLogger(&logs)))
		require.NoError(t, err)
		c := cache.New[appSpec, appStatus](st)
		cctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { _ = c.Run(cctx) })
		defer func() { cancel(); wg.Wait() }()
		span := "span-1"
		_, err = st.As("user").Create(context.WithValue(ctx, spanKey{}, &span), &app{Meta: store.Meta{Name: "a"}})
		require.NoError(t, err)

		// A first reconcile that fails: the Loop then writes Reconciling=True.
		s := newScript(func(string, int) (Result, error) { return Result{}, errors.New("not yet") })
		l, err := New("apps", s, FromStore(c, st), append(fixedBackoff(), WithFieldManager("app"), quiet())...)
		require.NoError(t, err)
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"))
		require.NoError(t, stop())

		got, err := st.Get(ctx, "a")
		require.NoError(t, err)
		rc, ok := conditions.Get(got.Conditions, conditions.Reconciling)
		require.True(t, ok, "the Loop's Reconciling write was made: %v", got.Conditions)
		require.Equal(t, store.ConditionTrue, rc.Status)
		require.Equal(t, "span-1", got.Meta.LastWrite.Trace, "an untraced status write keeps the trace before it")
		require.Contains(t, logs.String(), `level=ERROR msg="store: trace inject panicked; no write of this Store records a trace of its own from now on"`)
		require.Contains(t, logs.String(), "tracepanic_test.go:", "with the stack")
	})
}
