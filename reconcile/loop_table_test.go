package reconcile

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// One test per row of the result table, run through a real Loop in virtual
// time.

func TestLoopNilRunsOnceAndClearsStalled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemStatus("a")
		st.conds["a"] = []store.Condition{{Type: conditions.Stalled, Status: store.ConditionTrue, Reason: conditions.ReasonFailing, Message: "test: 5 consecutive failures: boom"}}
		st.owner[[2]string{"a", conditions.Stalled}] = "test-loop" // this Loop's manager
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, WithConditionWriter(keySet("a"), st), fixedBackoff()...)
		stop := start(t, l)
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"), "nil: runs again only on the next hint")
		c, _ := st.stalled("a")
		require.Equal(t, store.ConditionFalse, c.Status, "a recovered object clears Stalled")
		require.Equal(t, conditions.ReasonRecovered, c.Reason)
		require.Zero(t, l.Inspect("a").Failures)
		require.NoError(t, stop())
	})
}

func TestLoopNilWritesNothingForAHealthyObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemStatus("a")
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, WithConditionWriter(keySet("a"), st), fixedBackoff()...)
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"))
		require.Zero(t, st.writeCount(), "never stalled: no Stalled write")
		require.NoError(t, stop())
	})
}

func TestLoopRequeueRunsAgainWithoutCountingAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scriptFunc(nil)
		s.fn = func(ctx context.Context, _ string) (Result, error) {
			switch s.count("a") {
			case 1:
				return Result{}, errBoom
			case 2, 3:
				RecordWrite(ctx, 7) // a Requeue after a write
				return Result{RequeueAfterWrite: true}, nil
			}
			return Result{}, nil
		}
		l := mustNew(t, s, keySet("a"), fixedBackoff()...)
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"))
		time.Sleep(time.Second) // first backoff
		synctest.Wait()
		require.Equal(t, 4, s.count("a"), "two Requeues run again at once (no cache to wait for)")
		require.Equal(t, []time.Duration{time.Second, 0, 0}, s.gaps("a"))
		require.NoError(t, stop())
	})
}

func TestLoopRequeueAfterResetsAndWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(func(_ string, n int) (Result, error) {
			switch n {
			case 0:
				return Result{}, errBoom
			case 1:
				return Result{RequeueAfter: 5 * time.Minute}, nil
			case 2:
				return Result{}, errBoom
			}
			return Result{}, nil
		})
		l := mustNew(t, s, keySet("a"), fixedBackoff()...)
		stop := start(t, l)
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Equal(t, 4, s.count("a"))
		// 1s backoff, then 5m, then 1s again: RequeueAfter reset the count.
		require.Equal(t, []time.Duration{time.Second, 5 * time.Minute, time.Second}, s.gaps("a"))
		require.NoError(t, stop())
	})
}

func TestLoopErrorBacksOffAndStallsAfterN(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemStatus("a")
		s := newScript(func(_ string, n int) (Result, error) {
			if n < 6 {
				return Result{}, errBoom
			}
			return Result{}, nil
		})
		m := NewMemMetrics()
		l := mustNew(t, s, WithConditionWriter(keySet("a"), st), append(fixedBackoff(), WithMetrics(m))...)
		stop := start(t, l)
		synctest.Wait()
		time.Sleep(1*time.Second + 2*time.Second + 4*time.Second)
		synctest.Wait()
		require.Equal(t, 4, s.count("a"))
		info := l.Inspect("a")
		require.Equal(t, 4, info.Failures)
		require.ErrorIs(t, info.Err, errBoom)
		require.Equal(t, time.Now().Add(8*time.Second), info.Until)
		_, stalled := st.stalled("a")
		require.False(t, stalled, "4 failures: not yet Stalled")

		time.Sleep(8 * time.Second)
		synctest.Wait()
		c, ok := st.stalled("a")
		require.True(t, ok, "5th consecutive failure sets Stalled")
		require.Equal(t, store.ConditionTrue, c.Status)
		require.Equal(t, conditions.ReasonFailing, c.Reason)
		require.Equal(t, "test: boom", c.Message, "no failure count in the message")
		require.Equal(t, time.Now(), c.LastTransitionTime)
		require.Equal(t, int64(1), c.ObservedGeneration)

		time.Sleep(time.Hour)
		synctest.Wait()
		require.Equal(t, []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second}, s.gaps("a"))
		c, _ = st.stalled("a")
		require.Equal(t, store.ConditionFalse, c.Status, "recovered")
		require.Equal(t, 6, m.Errors("test"))
		require.Equal(t, 1, m.Results("test", resultSuccess))
		// Before: 2, one per decision (the 5th and 6th failures).
		require.Equal(t, 1, m.StalledCount("test", conditions.ReasonFailing), "one condition set")
		require.NoError(t, stop())
	})
}

func TestLoopBlockedStallsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemStatus("a")
		s := newScript(func(_ string, n int) (Result, error) {
			if n == 0 {
				return Result{}, Blocked("SecretMissing", errors.New(`secret "db" not found`))
			}
			return Result{}, nil
		})
		l := mustNew(t, s, WithConditionWriter(keySet("a"), st), fixedBackoff()...)
		stop := start(t, l)
		synctest.Wait()
		c, ok := st.stalled("a")
		require.True(t, ok)
		require.Equal(t, "SecretMissing", c.Reason)
		require.Equal(t, `test: secret "db" not found`, c.Message)
		info := l.Inspect("a")
		require.True(t, info.Stalled)
		require.Equal(t, "SecretMissing", info.StalledReason)
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, 2, s.count("a"), "retried after the backoff")
		c, _ = st.stalled("a")
		require.Equal(t, store.ConditionFalse, c.Status)
		require.NoError(t, stop())
	})
}

func TestLoopRetryAfterTakesTheLonger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScript(func(_ string, n int) (Result, error) {
			switch n {
			case 0:
				return Result{}, RetryAfter(errBoom, 30*time.Second)
			case 1, 2, 3:
				return Result{}, RetryAfter(errBoom, time.Millisecond)
			}
			return Result{}, nil
		})
		l := mustNew(t, s, keySet("a"), fixedBackoff()...)
		stop := start(t, l)
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Equal(t, []time.Duration{30 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, s.gaps("a"))
		require.NoError(t, stop())
	})
}

func TestLoopTerminalIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemStatus("a", "b")
		m := NewMemMetrics()
		s := newScript(func(key string, n int) (Result, error) {
			if key == "b" && n == 0 {
				return Result{RequeueAfter: time.Minute}, Terminal(errors.New("spec.size: must be positive"))
			}
			if n == 0 {
				return Result{}, Terminal(errors.New("spec.size: must be positive"))
			}
			return Result{}, nil
		})
		l := mustNew(t, s, WithConditionWriter(keySet("a", "b"), st), append(fixedBackoff(), WithMetrics(m))...)
		stop := start(t, l)
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"), "Terminal: no retry")
		c, ok := st.stalled("a")
		require.True(t, ok)
		require.Equal(t, conditions.ReasonTerminal, c.Reason)
		require.Equal(t, "test: spec.size: must be positive", c.Message)
		require.Zero(t, l.Inspect("a").Failures, "Terminal resets the count")
		require.Equal(t, []time.Duration{time.Minute}, s.gaps("b"), "Terminal with RequeueAfter runs after it")
		require.Equal(t, 2, m.TerminalErrors("test"))
		require.NoError(t, stop())
	})
}

func TestLoopResultWithErrorWarnsOncePerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		s := newScript(func(_ string, n int) (Result, error) {
			if n < 3 {
				return Result{RequeueAfterWrite: true}, errBoom
			}
			return Result{}, nil
		})
		l := mustNew(t, s, keySet("a", "b"), append(fixedBackoff(), WithLogger(newLogger(&logs)))...)
		stop := start(t, l)
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Equal(t, 4, s.count("a"))
		require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, s.gaps("a"), "follows the err row")
		out := logs.String()
		require.Equal(t, 2, countLines(out, "result returned with an error"), "one warning per key:\n%s", out)
		require.Equal(t, 6, countLines(out, "reconcile failed"))
		require.Contains(t, out, `level=WARN msg="reconcile failed" controller=test key=a attempt=1 terminal=false backoff=1s error=boom`, "the first failure")
		require.Contains(t, out, `level=DEBUG msg="reconcile failed" controller=test key=a attempt=2 terminal=false backoff=2s error=boom`, "a retry")
		require.Contains(t, out, `level=DEBUG msg=reconciled controller=test key=a attempt=1 duration=0s result=error`)
		require.NoError(t, stop())
	})
}

func countLines(s, sub string) int {
	n := 0
	for _, line := range splitLines(s) {
		if contains(line, sub) {
			n++
		}
	}
	return n
}

func TestLoopPanicBecomesAnErrorWithStack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMemMetrics()
		s := newScript(func(_ string, n int) (Result, error) {
			if n == 0 {
				panic("nil map")
			}
			return Result{}, nil
		})
		l := mustNew(t, s, keySet("a"), append(fixedBackoff(), WithMetrics(m))...)
		stop := start(t, l)
		synctest.Wait()
		info := l.Inspect("a")
		var pe *PanicError
		require.ErrorAs(t, info.Err, &pe)
		require.Equal(t, "nil map", pe.Value)
		require.Contains(t, string(pe.Stack), "reconcile.(*script).Reconcile")
		require.Equal(t, 1, m.Panics("test"))
		require.Equal(t, 1, info.Failures)
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, 2, s.count("a"), "a panic is retried like an error")
		require.NoError(t, stop())
	})
}

func TestLoopTimeoutCancelsWithCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cause error
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			<-ctx.Done()
			cause = context.Cause(ctx)
			return Result{}, ctx.Err()
		})
		l := mustNew(t, r, keySet("a"), append(fixedBackoff(), WithTimeout(10*time.Second))...)
		stop := start(t, l)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		require.ErrorIs(t, cause, ErrTimeout)
		require.ErrorIs(t, l.Inspect("a").Err, context.DeadlineExceeded)
		require.NoError(t, stop())
	})
}
