package workqueue

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// drain adds keys n times over (each key once per round), hands each out
// and back, and returns the queue's key table as the last Done left it.
func drain(t *testing.T, q *Queue[string], keys int) *keyTable[string] {
	t.Helper()
	batch := make([]string, keys)
	for i := range batch {
		batch[i] = "k" + strconv.Itoa(i)
	}
	q.AddLowBatch(batch)
	for range keys {
		k, ok := q.Get(t.Context())
		require.True(t, ok)
		q.Done(k)
	}
	require.Zero(t, q.Len())
	return &q.keys
}

// A table grown for a burst of keys (a Loop's first pass adds every key)
// lets its storage go once the burst drained: its pages would hold no key
// but cost the GC a scan of every node at every cycle. It grows back for
// the next burst, whose keys are all found again.
func TestDrainedBurstLetsTheKeyTableGo(t *testing.T) {
	q := New[string]()
	defer q.ShutDown()
	tab := drain(t, q, 10_000)
	require.Nil(t, tab.pages, "pages of a drained 10,000-key burst")
	require.Nil(t, tab.slots, "slots of a drained 10,000-key burst")

	q.AddLowBatch([]string{"a", "b"})
	q.Add("a")
	require.Equal(t, 2, q.Len(), "a and b after the table grew back, a added twice")
	for _, want := range []string{"a", "b"} {
		k, ok := q.Get(t.Context())
		require.True(t, ok)
		require.Equal(t, want, k)
		q.Done(k)
	}
}

// A small table stays when it empties: a queue that drains after each of
// a few keys allocates nothing for the next.
func TestDrainedSmallTableIsKept(t *testing.T) {
	q := New[string]()
	defer q.ShutDown()
	tab := drain(t, q, 1000)
	require.NotNil(t, tab.pages)
	require.NotNil(t, tab.slots)
}
