package workqueue_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/internal/queuetest"
	"github.com/steady-go/steady/internal/workqueue"
	"github.com/stretchr/testify/require"
)

// GetStamped and DoneStamped time the work with the caller's stamps: Get
// reuses the caller's free stamp when a key was waiting for it, Done takes
// the caller's end stamp (also the ready time of a rerun), and neither
// reads the clock then. A key that became ready after free, or a Get that
// waited, reads the clock.
func TestStampedGetAndDoneShareTheCallersClockReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &queuetest.CountingClock{}
		r := &queuetest.Recorder{}
		q := workqueue.New[string](workqueue.WithClock(c), workqueue.WithMetrics(r))
		defer q.ShutDown()
		ctx := context.Background()

		q.Add("a")
		q.Add("b") // both ready at 0
		time.Sleep(time.Second)
		a, at, ok := q.GetStamped(ctx, 0) // no free stamp: the clock is read
		require.True(t, ok)
		require.Equal(t, "a", a)
		require.Equal(t, time.Second, at)
		q.Add("a") // a rerun, queued by Done
		time.Sleep(2 * time.Second)
		end := q.Stamp()
		require.Equal(t, 3*time.Second, end)

		reads := c.Nows.Load()
		q.DoneStamped(a, end)
		b, at, _ := q.GetStamped(ctx, end) // b was ready by end
		require.Equal(t, reads, c.Nows.Load(), "no clock read: the caller's stamps serve")
		require.Equal(t, "b", b)
		require.Equal(t, 3*time.Second, at)

		time.Sleep(time.Second)
		q.DoneStamped(b, 4*time.Second)
		a, at, _ = q.GetStamped(ctx, 4*time.Second) // the rerun, ready at 3s
		require.Equal(t, "a", a)
		require.Equal(t, 4*time.Second, at)

		time.Sleep(time.Second)
		q.Add("c") // ready at 5s, after the free stamp given below
		q.DoneStamped(a, 4*time.Second)
		cc, at, _ := q.GetStamped(ctx, 4*time.Second)
		require.Equal(t, "c", cc)
		require.Equal(t, 5*time.Second, at, "ready after free: read, so that latency is never negative")
		q.Done(cc) // at 5s, read

		go func() {
			time.Sleep(time.Second)
			q.Add("d")
		}()
		d, at, _ := q.GetStamped(ctx, 5*time.Second) // waits for d
		require.Equal(t, "d", d)
		require.Equal(t, 6*time.Second, at, "a Get that waited reads the clock")
		q.DoneStamped(d, 7*time.Second)

		got := r.Snapshot()
		require.Equal(t, []time.Duration{time.Second, 3 * time.Second, time.Second, 0, 0}, got.Latencies)
		require.Equal(t, []time.Duration{2 * time.Second, time.Second, 0, 0, time.Second}, got.Works)
	})
}

func TestStampedGetWithoutMetricsReusesFreeOnlyWithoutWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.New[string]()
		defer q.ShutDown()
		ctx := context.Background()
		q.Add("a")
		time.Sleep(time.Second)
		_, at, _ := q.GetStamped(ctx, 0)
		require.Equal(t, time.Second, at)
		q.Add("b")
		_, at, _ = q.GetStamped(ctx, 500*time.Millisecond)
		require.Equal(t, 500*time.Millisecond, at, "no wait: the caller's free stamp")
		go func() {
			time.Sleep(time.Second)
			q.Add("c")
		}()
		_, at, _ = q.GetStamped(ctx, time.Second)
		require.Equal(t, 2*time.Second, at)
	})
}

// Stamps a caller gets wrong (a DoneStamped ahead of the clock, a
// GetStamped free stamp before the key's Get) give wrong durations, not
// negative ones: no histogram is handed a negative observation and
// Unfinished stays at or above zero.
func TestStampsOutOfOrderNeverGiveNegativeDurations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &queuetest.Recorder{}
		q := workqueue.New[string](workqueue.WithMetrics(r))
		defer q.ShutDown()
		ctx := context.Background()

		q.Add("a")
		a, at, _ := q.GetStamped(ctx, 0)
		q.Add(a)                         // a rerun, ready at the Done stamp
		q.DoneStamped(a, at+time.Hour)   // an end stamp an hour ahead of the clock
		q.DoneStamped(a, at-time.Hour)   // a second Done of a key no longer processing: ignored
		a, _, ok := q.GetStamped(ctx, 0) // reads the clock: an hour before the rerun's ready time
		require.True(t, ok)
		q.Done(a)
		q.Add("b")
		_, _, ok = q.GetStamped(ctx, at+2*time.Hour) // a free stamp from the future: b's work starts then
		require.True(t, ok)
		time.Sleep(2 * workqueue.UnfinishedInterval)

		got := r.Snapshot()
		for _, d := range got.Latencies {
			require.GreaterOrEqual(t, d, time.Duration(0), "latencies %v", got.Latencies)
		}
		for _, d := range got.Works {
			require.GreaterOrEqual(t, d, time.Duration(0), "works %v", got.Works)
		}
		require.Len(t, got.Latencies, 3)
		require.GreaterOrEqual(t, got.Unfinished, time.Duration(0))
		require.GreaterOrEqual(t, got.Longest, time.Duration(0))
	})
}
