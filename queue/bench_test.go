package queue_test

import (
	"context"
	"runtime"
	"strconv"
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
