package memstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// seeded returns a store holding n keys of 100-byte values.
func seeded(b *testing.B, n int) *memstore.Store {
	b.Helper()
	s := memstore.New()
	v := make([]byte, 100)
	for i := range n {
		if _, err := s.Txn(context.Background(), nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("obj/%06d", i), Value: v}); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func BenchmarkGet(b *testing.B) {
	s := seeded(b, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	ops, cpu := 0, processCPU()
	for b.Loop() {
		ops++
		if _, err := s.Get(ctx, "obj/004242"); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu, ops)
}

func BenchmarkGetParallel(b *testing.B) {
	s := seeded(b, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Get(ctx, "obj/004242"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkGetParallelKeys is Gets of different keys at once, each
// goroutine its own keys: what the key table's memory of the last key
// found (keys.last) costs readers that share no key.
func BenchmarkGetParallelKeys(b *testing.B) {
	s := seeded(b, 10_000)
	ctx := context.Background()
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		base := int(next.Add(1)) * 1000
		keys := make([]string, 64)
		for i := range keys {
			keys[i] = fmt.Sprintf("obj/%06d", (base+i)%10_000)
		}
		for i := 0; pb.Next(); i++ {
			if _, err := s.Get(ctx, keys[i%len(keys)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTxn is a conditional update of an existing key, the typed
// Store's Update at the byte level.
func BenchmarkTxn(b *testing.B) {
	s := seeded(b, 10_000)
	ctx := context.Background()
	kvp, err := s.Get(ctx, "obj/004242")
	if err != nil {
		b.Fatal(err)
	}
	rev := kvp.ModRevision
	v := make([]byte, 100)
	b.ReportAllocs()
	ops, cpu := 0, processCPU()
	for b.Loop() {
		ops++
		rev, err = s.Txn(ctx, []kv.Cond{{Key: "obj/004242", Target: kv.ModRevision, Revision: rev}},
			kv.Write{Kind: kv.WritePut, Key: "obj/004242", Value: v})
		if err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu, ops)
}

func BenchmarkTxnCreateDelete(b *testing.B) {
	s := seeded(b, 10_000)
	ctx := context.Background()
	v := make([]byte, 100)
	absent := []kv.Cond{{Key: "obj/004242x", Target: kv.CreateRevision}}
	b.ReportAllocs()
	ops, cpu := 0, processCPU()
	for b.Loop() {
		ops++
		if _, err := s.Txn(ctx, absent, kv.Write{Kind: kv.WritePut, Key: "obj/004242x", Value: v}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: "obj/004242x"}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu, ops)
}

func BenchmarkListPage(b *testing.B) {
	s := seeded(b, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	ops, cpu := 0, processCPU()
	for b.Loop() {
		ops++
		if _, err := s.List(ctx, "obj/", kv.ListOptions{Limit: 100, Continue: "obj/005000"}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu, ops)
}

// BenchmarkListPagePinned lists a page pinned 1000 writes in the past.
func BenchmarkListPagePinned(b *testing.B) {
	s := seeded(b, 10_000)
	ctx := context.Background()
	rev := s.Revision()
	v := make([]byte, 100)
	for i := range 1000 {
		if _, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("obj/%06d", i*7), Value: v}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	ops, cpu := 0, processCPU()
	for b.Loop() {
		ops++
		if _, err := s.List(ctx, "obj/", kv.ListOptions{Limit: 100, Continue: "obj/005000", Revision: rev}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu, ops)
}

// BenchmarkWatchFanOut writes to one prefix watched by 10 watchers and
// reports the events delivered to them per second. The writer runs at most
// two windows ahead of the slowest receiver, so no watch expires.
func BenchmarkWatchFanOut(b *testing.B) {
	const watchers, window = 10, 512
	s := memstore.New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	done := make([]chan int64, watchers)
	for i := range done {
		done[i] = make(chan int64, 4)
		ch, err := s.Watch(ctx, "w/", 0)
		if err != nil {
			b.Fatal(err)
		}
		wg.Go(func() {
			for ev := range ch {
				if ev.Err != nil {
					b.Error(ev.Err)
					return
				}
				if ev.Revision%window == 0 {
					done[i] <- ev.Revision
				}
			}
		})
	}
	// wait blocks until every watcher has received revision rev.
	wait := func(rev int64) {
		for i := range done {
			if got := <-done[i]; got != rev {
				b.Fatalf("watcher %d reported %d, want %d", i, got, rev)
			}
		}
	}
	v := make([]byte, 100)
	var n int64
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		rev, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "w/k", Value: v})
		if err != nil {
			b.Fatal(err)
		}
		n = rev
		if rev%window == 0 && rev > window {
			wait(rev - window)
		}
	}
	if n >= window {
		wait(n - n%window) // the last full window
	}
	b.ReportMetric(float64(n*watchers)/b.Elapsed().Seconds(), "events/s")
	if used := processCPU() - cpu; used > 0 && cpu > 0 {
		// Events per CPU-second: the rate with the machine to itself,
		// two cores' worth of CPU time counted as two seconds.
		b.ReportMetric(float64(n*watchers)/used.Seconds(), "events/cpu-s")
	}
	cancel()
	wg.Wait()
}

// BenchmarkWatchWake is the event path's shape: one write at a time, each
// waited for by an idle watch, so every event wakes the watch from
// waiting. Each op is one write and its event; allocations per op are the
// write's and the wake-up's.
func BenchmarkWatchWake(b *testing.B) {
	s := memstore.New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := s.Watch(ctx, "w/", 0)
	if err != nil {
		b.Fatal(err)
	}
	v := make([]byte, 100)
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		rev, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "w/k", Value: v})
		if err != nil {
			b.Fatal(err)
		}
		if ev := <-ch; ev.Revision != rev {
			b.Fatalf("event at %d, want %d", ev.Revision, rev)
		}
	}
	reportCPU(b, cpu, b.N)
	cancel()
	for range ch {
	}
}

// BenchmarkListPinnedListing lists all of 10,000 keys in pages of 500, each
// pinned to the revision of a first page 2000 writes in the past, as the
// pages of a Cache's relist are while writers go on.
func BenchmarkListPinnedListing(b *testing.B) {
	s := seeded(b, 10_000)
	ctx := context.Background()
	rev := s.Revision()
	v := make([]byte, 100)
	for i := range 2000 {
		if _, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("obj/%06d", i*5), Value: v}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	ops, cpu := 0, processCPU()
	for b.Loop() {
		ops++
		after, n := "", 0
		for {
			page, err := s.List(ctx, "obj/", kv.ListOptions{Limit: 500, Continue: after, Revision: rev})
			if err != nil {
				b.Fatal(err)
			}
			n += len(page.KVs)
			if page.Continue == "" {
				break
			}
			after = page.Continue
		}
		if n != 10_000 {
			b.Fatalf("listed %d keys, want 10000", n)
		}
	}
	reportCPU(b, cpu, ops)
}

// BenchmarkTxnManyKeys is BenchmarkTxn at 120,000 keys of ~600-byte
// values shaped as the controller benchmark's stored Apps, once the window
// the keys call for (20,000 writes) is full: each key in turn gets a spec
// update by one writer (generation moved) and a status write by another
// (ready replicas moved), the two writes of an event of the controller
// benchmark, one op each. What a write costs the history at rest past
// 100,000 keys, the ageing of old values included where they outgrow
// their budget. (Few keys past 100,000, so that callgrind's runs of it
// take minutes, not an hour.)
func BenchmarkTxnManyKeys(b *testing.B) {
	const keys, window = 120_000, 2 * memstore.BaseWindow
	value := func(i, gen, ready int, manager, op string) []byte {
		return fmt.Appendf(nil, `{"metadata":{"kind":"App","name":"app-%06d","uid":"be0d6774-9f1c-4c55-8a0e-%012d","managed":[{"manager":"user","operation":"Update","fields":"~htm_NA_gE"},{"manager":"app-controller","operation":"Apply","subresource":"status","fields":"~Dha_owBA"}],"lastWrite":{"manager":%q,"op":%q},"generation":%d,"statusGeneration":%d},"spec":{"replicas":%d,"image":"registry.example.com/platform/web-frontend:v1.27.3","args":["--listen=:8080","--log-level=info","--config=/etc/web/config.yaml"],"selector":{"app":"web","shard":"%d"}},"status":{"readyReplicas":%d}}`,
			i, i, manager, op, gen, ready, gen, i%64, ready)
	}
	s := memstore.New()
	ctx := context.Background()
	put := func(w int) { // write w: of key w/2, a spec update if even, else a status write
		i, gen := (w/2)%keys, w/(2*keys)+1
		v := value(i, gen, gen-1, "user", "Update")
		if w%2 == 1 {
			v = value(i, gen, gen, "app-controller", "ApplyStatus")
		}
		if _, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("obj/%06d", i), Value: v}); err != nil {
			b.Fatal(err)
		}
	}
	w := 1
	for ; w < 2*keys; w += 2 { // the keys, at their first status write
		put(w)
	}
	for ; w < 2*keys+window; w++ { // then a full window of writes
		put(w)
	}
	b.ReportAllocs()
	for b.Loop() {
		put(w)
		w++
	}
}
