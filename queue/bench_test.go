package queue_test

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steady-go/steady/queue"
)

var benchKeys = func() []string {
	k := make([]string, 10000)
	for i := range k {
		k[i] = "ns/obj-" + strconv.Itoa(i)
	}
	return k
}()

func BenchmarkAddGetDone(b *testing.B) {
	q := queue.New[string]()
	defer q.ShutDown()
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q.Add(benchKeys[i%len(benchKeys)])
		k, _ := q.Get(ctx)
		q.Done(k)
		i++
	}
}

// BenchmarkAddQueued is a duplicate Add: its key is already queued, so the
// Add finds it and changes nothing.
func BenchmarkAddQueued(b *testing.B) {
	q := queue.New[string]()
	defer q.ShutDown()
	q.Add(benchKeys[0])
	b.ReportAllocs()
	for b.Loop() {
		q.Add(benchKeys[0])
	}
}

func BenchmarkBurstDedupDrain10k(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		q := queue.New[string]()
		for range 10 {
			for _, k := range benchKeys {
				q.Add(k)
			}
		}
		for range benchKeys {
			k, _ := q.Get(ctx)
			q.Done(k)
		}
		q.ShutDown()
	}
}

func BenchmarkAddAfterDrain10k(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		q := queue.New[string]()
		for j, k := range benchKeys {
			q.AddAfter(k, time.Duration(j%100)*time.Microsecond)
		}
		for range benchKeys {
			k, _ := q.Get(ctx)
			q.Done(k)
		}
		q.ShutDown()
	}
}

// BenchmarkMemory1M reports the queue's own heap per key with a million
// string keys queued ("ready") or delayed ("delayed"). The keys' bytes are
// the caller's and are not counted.
func BenchmarkMemory1M(b *testing.B) {
	const n = 1_000_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "ns/obj-" + strconv.Itoa(i)
	}
	for _, tc := range []struct {
		name string
		add  func(q *queue.Queue[string], k string)
	}{
		{"ready", func(q *queue.Queue[string], k string) { q.Add(k) }},
		{"delayed", func(q *queue.Queue[string], k string) { q.AddAfter(k, time.Hour) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var perKey float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				q := queue.New[string]()
				for _, k := range keys {
					tc.add(q, k)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perKey = float64(after.HeapAlloc-before.HeapAlloc) / n
				q.ShutDown()
				runtime.KeepAlive(q)
			}
			b.ReportMetric(perKey, "bytes/key")
		})
	}
}

// BenchmarkParallelAdd4W adds keys from GOMAXPROCS goroutines while four
// workers take and finish them: the shape of queuecmp's
// parallel-add-4-workers pair against client-go. gets/add is how many keys
// the workers took per Add: an Add of a key still queued is a lookup, one
// of a key the workers took is an insert, a wake-up and a Get and Done, so
// ns/op follows this mix, which the scheduler sets. The side-by-side, with
// CPU time per op, is bench's BenchmarkParallelAdd4W (controller.sh -p queue).
func BenchmarkParallelAdd4W(b *testing.B) {
	q := queue.New[string]()
	ctx := context.Background()
	var gets atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				k, ok := q.Get(ctx)
				if !ok {
					return
				}
				gets.Add(1)
				q.Done(k)
			}
		})
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			q.Add(benchKeys[i%len(benchKeys)])
			i += 7
		}
	})
	q.ShutDown()
	wg.Wait()
	b.ReportMetric(float64(gets.Load())/float64(b.N), "gets/add")
}

// BenchmarkResyncPass100k is a Loop's resync pass as the queue sees it: a
// hundred thousand keys added low, then each taken and handed back, in one
// goroutine, so that its instruction count (callgrind) is the queue's own
// per-key cost with no lock contention or scheduling in it.
func BenchmarkResyncPass100k(b *testing.B) {
	const n = 100_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "obj-" + strconv.Itoa(i)
	}
	q := queue.New[string]()
	defer q.ShutDown()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		for _, k := range keys {
			q.AddLow(k)
		}
		for range n {
			k, _ := q.Get(ctx)
			q.Done(k)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/key")
}
