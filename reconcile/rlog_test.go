package reconcile

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// Each reconcile's ctx carries a logger with the loop, key and a
// reconcile ID, and the Loop's own line about the same reconcile carries
// the same ID; every reconcile has its own.
func TestLoggerInCtxCarriesLoopKeyAndReconcileID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		var mu sync.Mutex
		var ids []string
		s := scriptFunc(func(ctx context.Context, key string) (Result, error) {
			mu.Lock()
			ids = append(ids, ReconcileID(ctx))
			mu.Unlock()
			Logger(ctx).Info("from the reconciler")
			return Result{}, errors.New("boom")
		})
		l := mustNew(t, s, keySet("a"), append(fixedBackoff(), WithLogger(newLogger(&logs)))...)
		stop := start(t, l)
		synctest.Wait()
		l.Add("a")
		synctest.Wait()
		require.NoError(t, stop())
		mu.Lock()
		defer mu.Unlock()
		require.GreaterOrEqual(t, len(ids), 2)
		require.Regexp(t, `^[0-9a-f]{8}-\d+$`, ids[0])
		require.NotEqual(t, ids[0], ids[1], "one ID per reconcile")
		out := logs.String()
		require.Contains(t, out, `msg="from the reconciler" controller=test key=a reconcileID=`+ids[0]+"\n")
		require.Regexp(t, regexp.MustCompile(`msg="reconcile failed" controller=test key=a .* reconcileID=`+ids[0]+"\n"), out)
	})
}

// Outside a Loop: the default logger and no ID.
func TestLoggerOutsideALoop(t *testing.T) {
	require.Same(t, slog.Default(), Logger(context.Background()))
	require.Empty(t, ReconcileID(context.Background()))
}
