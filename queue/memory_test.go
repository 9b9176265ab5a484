package queue_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/race"
	"github.com/steady-go/steady/queue"
)

// The package doc's figures: a queue holding a key costs about 50 bytes plus
// the key, about 70 while the key is delayed (49 and 66 at a million keys,
// BenchmarkMemory1M; 53 and 74 at 100,000), and once it has held as many
// keys before, Add, Get and Done allocate nothing.
func TestAKeyCostsAboutFiftyBytesAndAddGetDoneAllocateNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector changes heap sizes")
	}
	const n = 100_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "ns/obj-" + strconv.Itoa(i)
	}
	perKey := func(add func(*queue.Queue[string], string)) float64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		q := queue.New[string]()
		for _, k := range keys {
			add(q, k)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(q)
		q.ShutDown()
		return float64(after.HeapAlloc-before.HeapAlloc) / n
	}
	ready := perKey(func(q *queue.Queue[string], k string) { q.Add(k) })
	delayed := perKey(func(q *queue.Queue[string], k string) { q.AddAfter(k, time.Hour) })
	t.Logf("%.1f bytes a ready key, %.1f a delayed one", ready, delayed)
	require.LessOrEqual(t, ready, 60.0, "about 50 bytes a ready key")
	require.LessOrEqual(t, delayed, 80.0, "about 70 bytes a delayed key")

	q := queue.New[string]()
	ctx := context.Background()
	cycle := func() {
		for _, k := range keys[:1000] {
			q.Add(k)
			q.Add(k) // deduplicated
		}
		for range 1000 {
			k, _ := q.Get(ctx)
			q.Add(k) // rerun after Done
			q.Done(k)
		}
		for range 1000 {
			k, _ := q.Get(ctx)
			q.Done(k)
		}
	}
	cycle()
	require.Zero(t, testing.AllocsPerRun(10, cycle))
}
