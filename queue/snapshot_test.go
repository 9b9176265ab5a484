package queue_test

import (
	"maps"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/queue"
	"github.com/stretchr/testify/require"
)

func TestCountsAndAllReportEveryHeldKeyByState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		require.Equal(t, queue.Counts{}, q.Counts())

		q.Add("run")
		require.Equal(t, "run", mustGet(t, q)) // processing
		q.Add("run")                           // dirty: reruns at Done
		q.Add("ready")
		q.AddLow("low")
		q.AddAfter("later", time.Minute)

		require.Equal(t, queue.Counts{Ready: 1, Low: 1, Processing: 1, Dirty: 1, Delayed: 1}, q.Counts())
		all := maps.Collect(q.All())
		require.Equal(t, map[string]queue.KeyState{
			"run":   {Processing: true, Dirty: true},
			"ready": {Queued: true},
			"low":   {Queued: true, Priority: queue.Low},
			"later": {Delayed: true, ReadyAt: time.Now().Add(time.Minute)},
		}, all)
		for k, st := range all {
			require.Equal(t, q.State(k), st, "All and State agree on %q", k)
		}

		// A delay that has passed counts as ready.
		time.Sleep(time.Minute)
		require.Equal(t, queue.Counts{Ready: 2, Low: 1, Processing: 1, Dirty: 1}, q.Counts())

		// Done of the dirty key queues it again; once every key is done the
		// queue holds nothing.
		q.Done("run")
		for range 4 {
			k := mustGet(t, q)
			q.Done(k)
		}
		require.Equal(t, queue.Counts{}, q.Counts())
		require.Empty(t, maps.Collect(q.All()))
	})
}

func TestAllStopsWhenTheLoopBreaks(t *testing.T) {
	q := queue.New[int]()
	defer q.ShutDown()
	for i := range 10 {
		q.Add(i)
	}
	n := 0
	for range q.All() {
		n++
		if n == 3 {
			break
		}
	}
	require.Equal(t, 3, n)
}
