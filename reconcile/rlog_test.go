package reconcile

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strconv"
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

// A reconcile's ID is the same from every goroutine of the reconcile that
// asks for it, even at once; the numbers count the reconciles that used
// their ID, in the order of first use: a reconcile that uses none (most)
// takes none, so the workers share no counter they write at each one.
func TestReconcileIDNumbersOnlyTheReconcilesThatUseIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var ids [][]string
		s := scriptFunc(func(ctx context.Context, key string) (Result, error) {
			if key != "asks" {
				return Result{}, nil
			}
			got := make([]string, 4)
			var wg sync.WaitGroup
			for i := range got {
				wg.Go(func() { got[i] = ReconcileID(ctx) })
			}
			wg.Wait()
			mu.Lock()
			ids = append(ids, got)
			mu.Unlock()
			return Result{}, nil
		})
		l := mustNew(t, s, keySet("q1", "q2", "q3"))
		stop := start(t, l)
		synctest.Wait()
		l.Add("asks")
		synctest.Wait()
		l.Add("q1")
		synctest.Wait()
		l.Add("asks")
		synctest.Wait()
		require.NoError(t, stop())
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, ids, 2)
		for i, got := range ids {
			require.Regexp(t, `^[0-9a-f]{8}-`+strconv.Itoa(i+1)+`$`, got[0], "reconcile %d", i)
			for _, id := range got {
				require.Equal(t, got[0], id, "one ID per reconcile, whichever goroutine asks")
			}
		}
	})
}
