package queue_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/queue"
)

// The package doc: adding a key that a worker is processing makes it run
// once more after Done, never concurrently, with events (Add) alone.
// (TestAddsWhileProcessingGiveExactlyOneRerunAfterDone mixes in AddLow,
// whose own rerun would hide a queue that dropped those Adds.)
func TestAddsAloneWhileProcessingGiveExactlyOneRerunAfterDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := queue.New[string]()
		defer q.ShutDown()
		q.Add("a")
		require.Equal(t, "a", mustGet(t, q))
		for range 10_000 {
			q.Add("a")
		}
		requireEmpty(t, q)
		q.Done("a")
		require.Equal(t, []string{"a"}, drain(q), "one rerun, not 10,000, not none")
		require.True(t, q.State("a").Idle())
	})
}
