package reconcile

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// spinGuard stops a reconciler that asks for Requeue after limit calls, so
// that a Loop that spins fails the test instead of hanging it (in a
// synctest bubble a spinning goroutine stops virtual time).
const spinGuard = 10_000

// controller-runtime's "not ready yet, requeue" idiom: Requeue with no write.
// There is nothing for the cache to catch up with, so the Loop paces it with
// per-key backoff instead of running it again at once; it is not a failure
// and never makes the object Stalled.
func TestRequeueWithoutAWriteBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemStatus("a")
		s := newScript(func(_ string, n int) (Result, error) {
			return Result{RequeueAfterWrite: n < spinGuard}, nil
		})
		m := NewMemMetrics()
		l := mustNew(t, s, WithConditionWriter(keySet("a"), st), append(fixedBackoff(), WithStallAfter(1), WithMetrics(m))...)
		stop := start(t, l)
		time.Sleep(time.Minute)
		synctest.Wait()
		// Before: 10,000 reconciles in no time (the guard stopped them).
		require.Equal(t, 6, s.count("a"), "1s, 2s, 4s, 8s, 16s: per-key backoff")
		require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}, s.gaps("a"))
		info := l.Inspect("a")
		require.Zero(t, info.Failures, "a Requeue is not a failure")
		require.NoError(t, info.Err)
		require.Equal(t, resultRequeue, info.LastResult)
		require.False(t, info.Stalled)
		require.Zero(t, st.writeCount(), "never Stalled, even with stall-after 1")
		require.Equal(t, 6, m.Results("test", resultRequeue))
		require.NoError(t, stop())
	})
}

// The backoff belongs to the run of Requeues: a result that is not a
// Requeue without a write starts it over, and a Requeue after a write still
// runs as soon as the write is readable (here at once: no cache to wait for).
func TestRequeueBackoffResetsAndWritesStillRunAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scriptFunc(nil)
		s.fn = func(ctx context.Context, _ string) (Result, error) {
			switch n := s.count("a"); n {
			case 1, 2, 4, 5: // no write
				return Result{RequeueAfterWrite: true}, nil
			case 3, 6: // wrote something
				RecordWrite(ctx, int64(n))
				return Result{RequeueAfterWrite: true}, nil
			}
			return Result{}, nil
		}
		l := mustNew(t, s, keySet("a"), fixedBackoff()...)
		stop := start(t, l)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, 7, s.count("a"))
		require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 0, time.Second, 2 * time.Second, 0}, s.gaps("a"),
			"a write resets the backoff of unwritten Requeues and runs again at once")
		require.Zero(t, l.Inspect("a").Failures)
		require.NoError(t, stop())
	})
}

// The controller-runtime habit Result{Requeue: true} (which there meant
// "again at once, rate limited" and is deprecated) is safe here: it means
// RequeueAfterWrite, so a pass that wrote nothing is paced by per-key
// backoff, never a spin; and it is loud: the Loop warns once, at the first
// such result, that the field is deprecated and what it does here.
func TestDeprecatedRequeueIsPacedAndWarnsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		s := newScript(func(_ string, n int) (Result, error) { return Result{Requeue: n < spinGuard}, nil })
		l := mustNew(t, s, keySet("a", "b"), append(fixedBackoff(), WithLogger(newLogger(&logs)))...)
		stop := start(t, l)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, 6, s.count("a"), "1s, 2s, 4s, 8s, 16s: per-key backoff")
		require.Equal(t, 1, strings.Count(logs.String(), "Result.Requeue is deprecated"), logs.String())
		require.NoError(t, stop())
	})
}
