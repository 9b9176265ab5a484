package reconcile

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

func TestInfoAndInspectAllDescribeEveryKeyThatIsNotIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		s := scriptFunc(func(ctx context.Context, key string) (Result, error) {
			switch key {
			case "bad":
				return Result{}, errors.New("disk full")
			case "later":
				return Result{RequeueAfter: time.Hour}, nil
			case "slow":
				<-release
			case "final":
				return Result{}, Terminal(errors.New("bad spec"))
			}
			return Result{}, nil
		})
		sw := newMemStatus("bad", "good", "later", "slow", "final")
		l := mustNew(t, s, WithConditionWriter(keySet("bad", "good", "later", "slow", "final"), sw),
			append(fixedBackoff(), WithWorkers(2), WithStallAfter(1), WithMetrics(NewMemMetrics()))...)

		before := l.Info()
		require.Equal(t, LoopInfo{Name: "test", FieldManager: "test", Workers: 2}, before, "before Run: not leading, nothing queued")
		require.Empty(t, l.InspectAll())

		stop := start(t, l)
		synctest.Wait()

		st := l.Info()
		require.True(t, st.Leading)
		require.False(t, st.Fenced, "no elector, no fence")
		require.Equal(t, 1, st.Busy, "slow is running")
		require.Equal(t, QueueCounts{Processing: 1, Delayed: 1, BackingOff: 1}, st.Queue)
		require.Equal(t, 1, st.Failing)
		require.Equal(t, 2, st.Stalled, "bad after one failure (WithStallAfter(1)), final at once")

		keys := l.InspectAll()
		byKey := map[string]KeyInfo{}
		var order []string
		for _, k := range keys {
			byKey[k.Key] = k
			order = append(order, k.Key)
		}
		require.Equal(t, []string{"bad", "final", "later", "slow"}, order, "stalled first, then the rest; the healthy key is idle")
		for _, k := range keys {
			require.Equal(t, k, l.Inspect(k.Key), "one view of a key: Inspect reports what InspectAll does")
		}

		bad := byKey["bad"]
		require.Equal(t, PhaseBackingOff, bad.Phase)
		require.Equal(t, "backing off after 1 consecutive failures", bad.Why)
		require.Equal(t, time.Now().Add(time.Second), bad.Until)
		require.Equal(t, 1, bad.Failures)
		require.Equal(t, "disk full", bad.LastError)
		require.Equal(t, "error", bad.LastResult)
		require.True(t, bad.Stalled)
		require.Equal(t, conditions.ReasonFailing, bad.StalledReason)
		c, ok := conditions.Get(bad.Conditions, conditions.Stalled)
		require.True(t, ok, "conditions come through the ConditionWriter")
		require.Equal(t, store.ConditionTrue, c.Status)
		require.Equal(t, int64(1), bad.Generation)

		final := byKey["final"]
		require.Equal(t, PhaseWaiting, final.Phase)
		require.Equal(t, "terminal error: runs on the next change or resync", final.Why)
		require.Equal(t, conditions.ReasonTerminal, final.StalledReason)

		later := byKey["later"]
		require.Equal(t, PhaseDelayed, later.Phase)
		require.Equal(t, "RequeueAfter", later.Why)
		require.Equal(t, time.Now().Add(time.Hour), later.Until)
		require.Equal(t, queue.KeyState{Delayed: true, ReadyAt: later.Until}, later.Queue)

		slow := byKey["slow"]
		require.Equal(t, PhaseRunning, slow.Phase)
		require.True(t, slow.Queue.Processing)

		// A hint while slow runs: it runs again after this reconcile.
		l.Add("slow")
		require.Equal(t, "reconciling; runs again after this reconcile", findKey(t, l, "slow").Why)
		close(release)
		synctest.Wait()
		require.Equal(t, 0, l.Info().Busy)
		_, found := lookupKey(l, "slow")
		require.False(t, found, "slow is idle once its rerun is done")

		require.NoError(t, stop())
		require.False(t, l.Info().Leading)
	})
}

func TestKeyStatusesReportTheLastDurationWhenTheLoopTimesReconciles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scriptFunc(func(ctx context.Context, key string) (Result, error) {
			time.Sleep(3 * time.Second)
			return Result{}, errors.New("slow failure")
		})
		l := mustNew(t, s, keySet("a"), append(fixedBackoff(), WithMetrics(NewMemMetrics()))...)
		stop := start(t, l)
		time.Sleep(3 * time.Second)
		synctest.Wait()
		require.Equal(t, 3*time.Second, findKey(t, l, "a").LastDuration)
		require.NoError(t, stop())
	})
}

func TestAttemptCountsConsecutiveFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		require.Zero(t, Attempt(context.Background()), "not a Loop's ctx")
		got := make(chan int, 10)
		s := scriptFunc(func(ctx context.Context, key string) (Result, error) {
			got <- Attempt(ctx)
			if len(got) < 3 {
				return Result{}, errors.New("again")
			}
			return Result{}, nil
		})
		l := mustNew(t, s, keySet("a"), fixedBackoff()...)
		stop := start(t, l)
		time.Sleep(time.Minute)
		require.NoError(t, stop())
		close(got)
		var attempts []int
		for a := range got {
			attempts = append(attempts, a)
		}
		require.Equal(t, []int{1, 2, 3}, attempts)
	})
}

func lookupKey(l *Loop[string], key string) (KeyInfo, bool) {
	for _, k := range l.InspectAll() {
		if k.Key == key {
			return k, true
		}
	}
	return KeyInfo{}, false
}

func findKey(t *testing.T, l *Loop[string], key string) KeyInfo {
	t.Helper()
	k, ok := lookupKey(l, key)
	require.True(t, ok, "key %q not reported", key)
	return k
}

func TestKeyStatusesLeaveOutKeysWhoseOnlyStateIsADetector(t *testing.T) {
	l := mustNew(t, newScript(func(string, int) (Result, error) { return Result{}, nil }), nil)
	l.mu.Lock()
	l.detectors.put("counting", oscillation.New(oscillation.Config{}))
	l.setKeyLocked("failed", &keyState{failures: 1, lastErr: errors.New("x")})
	l.mu.Unlock()
	keys := l.InspectAll()
	require.Len(t, keys, 1)
	require.Equal(t, "failed", keys[0].Key)
	require.Equal(t, PhaseWaiting, keys[0].Phase)
}

// Ready means what it means in queue.Counts: keys waiting at normal
// priority (hints, retries); Low counts those waiting at low priority
// (resync), so Ready+Low keys wait for a worker.
func TestQueueCountsReadyIsNormalPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		s := scriptFunc(func(ctx context.Context, key string) (Result, error) {
			if key == "a" {
				<-release
			}
			return Result{}, nil
		})
		l := mustNew(t, s, keySet("a", "b", "c"), WithWorkers(1))
		stop := start(t, l)
		synctest.Wait() // a runs; b and c wait at low priority, as listed
		l.Add("hint")
		q := l.Info().Queue
		require.Equal(t, 1, q.Ready, "the hint, at normal priority")
		require.Equal(t, 2, q.Low, "b and c, listed at low priority")
		require.Equal(t, 1, q.Processing)
		close(release)
		require.NoError(t, stop())
	})
}
