package cache_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// staticSource lists a fixed set of objects in one page, the very pointers
// it was given, and watches forever; it lets a benchmark measure what the
// Cache adds on top of the objects.
type staticSource[S, T any] struct {
	items []*store.Object[S, T]
	rev   int64
}

func (s staticSource[S, T]) List(context.Context, store.ListOptions) (*store.List[S, T], error) {
	return &store.List[S, T]{Items: s.items, Revision: s.rev}, nil
}

func (s staticSource[S, T]) Watch(ctx context.Context, _ int64) (<-chan store.Event[S, T], error) {
	ch := make(chan store.Event[S, T])
	go func() {
		<-ctx.Done()
		close(ch)
	}()
	return ch, nil
}

// benchCacheSpec and benchCacheStatus make a typical small object (about
// 2 KB decoded): a few labels, an owner, a condition, managed fields.
type benchCacheSpec struct {
	Image    string            `json:"image"`
	Replicas int               `json:"replicas"`
	Command  []string          `json:"command"`
	Env      map[string]string `json:"env"`
}

type benchCacheStatus struct {
	Ready    int   `json:"ready"`
	Observed int64 `json:"observed"`
}

type benchCacheObj = store.Object[benchCacheSpec, benchCacheStatus]

// benchObjectJSON is the encoding of a typical object; %[1]d numbers it.
const benchObjectJSON = `{"metadata":{"kind":"Widget","name":"widget-%06[1]d","uid":"6f1c2e7a-0000-4000-8000-%012[1]d",` +
	`"labels":{"app":"app-%[2]d","release":"stable","tier":"backend"},"annotations":{"note":"benchmark object"},` +
	`"owners":[{"kind":"Set","name":"set-%[3]d","uid":"owner-%06[3]d","controller":true}],` +
	`"managed":[{"manager":"controller","operation":"Apply","fields":"{\"f:spec\":{\"f:image\":{},\"f:replicas\":{}}}"}],` +
	`"lastWrite":{"manager":"controller","op":"Apply"},"generation":3},` +
	`"spec":{"image":"registry.example.com/app:v1.2.3","replicas":3,"command":["/bin/app","--port=8080"],"env":{"LOG":"info","MODE":"prod"}},` +
	`"status":{"ready":3,"observed":3},` +
	`"conditions":[{"type":"Ready","status":"True","reason":"AllReplicasReady","message":"3 of 3 replicas are ready",` +
	`"lastTransitionTime":"2026-01-02T03:04:05Z","observedGeneration":3}]}`

// decodeBenchObjects decodes n distinct objects from JSON, as the Store
// does, so their memory is what a real cache holds.
func decodeBenchObjects(tb testing.TB, n int) []*benchCacheObj {
	tb.Helper()
	out := make([]*benchCacheObj, n)
	var buf []byte
	for i := range n {
		buf = fmt.Appendf(buf[:0], benchObjectJSON, i, i%50, i/3)
		out[i] = new(benchCacheObj)
		if err := json.Unmarshal(buf, out[i]); err != nil {
			tb.Fatal(err)
		}
		out[i].Meta.Revision = int64(i + 1)
	}
	return out
}

func syncedCache[S, T any](tb testing.TB, src cache.ListWatcher[S, T], setup func(*cache.Cache[S, T])) (*cache.Cache[S, T], func()) {
	tb.Helper()
	c := cache.New(src, cache.WithMutationDetector(nil)) // off, as in production
	if setup != nil {
		setup(c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	if err := c.WaitForSync(ctx); err != nil {
		tb.Fatal(err)
	}
	return c, func() {
		cancel()
		if err := <-done; err != nil {
			tb.Error(err)
		}
	}
}

// BenchmarkCacheGet: Get of one of n cached objects, visited in a scattered
// order. Target: ≤ 200ns, 0 allocs. The map sub-benchmarks are the floor:
// the same lookups in a plain map, without the read lock.
func BenchmarkCacheGet(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		objs := decodeBenchObjects(b, n)
		c, stop := syncedCache(b, staticSource[benchCacheSpec, benchCacheStatus]{items: objs, rev: int64(n)}, nil)
		names := make([]string, n)
		plain := make(map[string]*benchCacheObj, n)
		for i, o := range objs {
			names[i] = o.Meta.Name
			plain[o.Meta.Name] = o
		}
		b.Run(fmt.Sprintf("cache/objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, ok := c.Get(names[i]); !ok {
					b.Fatal("missing")
				}
				i = (i + 7919) % n
			}
		})
		b.Run(fmt.Sprintf("map/objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if plain[names[i]] == nil {
					b.Fatal("missing")
				}
				i = (i + 7919) % n
			}
		})
		stop()
	}
}

// BenchmarkCacheGetParallel: Get from all CPUs at once (readers share a
// read lock).
func BenchmarkCacheGetParallel(b *testing.B) {
	objs := decodeBenchObjects(b, 100_000)
	c, stop := syncedCache(b, staticSource[benchCacheSpec, benchCacheStatus]{items: objs, rev: 100_000}, nil)
	defer stop()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.Get(objs[i].Meta.Name)
			i = (i + 7919) % len(objs)
		}
	})
}

// BenchmarkCacheMemory measures the heap a Cache adds on top of the 100k
// decoded objects it serves: the item map and its indexes. It reports
// overhead-% (target ≤ 20), object-B (heap per decoded object) and
// cache-B/object. The mutation detector is off, as in production.
func BenchmarkCacheMemory(b *testing.B) {
	const n = 100_000
	for _, tc := range []struct {
		name  string
		setup func(*cache.Cache[benchCacheSpec, benchCacheStatus])
	}{
		{"ownerIndex", nil},
		{"ownerAndLabelIndexes", func(c *cache.Cache[benchCacheSpec, benchCacheStatus]) {
			if err := c.AddLabelIndex("app"); err != nil {
				b.Fatal(err)
			}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var objBytes, cacheBytes float64
			for b.Loop() {
				before := heapInUse()
				objs := decodeBenchObjects(b, n)
				decoded := heapInUse()
				c, stop := syncedCache(b, staticSource[benchCacheSpec, benchCacheStatus]{items: objs, rev: n}, tc.setup)
				stop()
				cached := heapInUse()
				objBytes = float64(decoded - before)
				cacheBytes = float64(cached - decoded)
				runtime.KeepAlive(objs)
				runtime.KeepAlive(c)
			}
			b.ReportMetric(100*cacheBytes/objBytes, "overhead-%")
			b.ReportMetric(objBytes/n, "object-B")
			b.ReportMetric(cacheBytes/n, "cache-B/object")
		})
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// feedSource lists nothing and delivers on its watch what the benchmark
// sends on feed.
type feedSource struct {
	feed chan store.Event[cacheSpec, cacheStatus]
}

func (s feedSource) List(context.Context, store.ListOptions) (*store.List[cacheSpec, cacheStatus], error) {
	return &store.List[cacheSpec, cacheStatus]{Revision: 1}, nil
}

func (s feedSource) Watch(ctx context.Context, _ int64) (<-chan store.Event[cacheSpec, cacheStatus], error) {
	out := make(chan store.Event[cacheSpec, cacheStatus])
	go func() {
		defer close(out)
		for {
			select {
			case ev := <-s.feed:
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// BenchmarkWaitForLagging is a Loop's read-your-writes waits on a Cache
// that runs behind: 1,000 WaitFor calls, each for its own revision ahead of
// the Cache, released one by one as the Cache advances a revision at a
// time. Each op is the 1,000 revisions and waits.
func BenchmarkWaitForLagging(b *testing.B) {
	const waiters = 1000
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := feedSource{feed: make(chan store.Event[cacheSpec, cacheStatus])}
	c := cache.New[cacheSpec, cacheStatus](src, cache.WithRelistPeriod(0))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := c.WaitForSync(ctx); err != nil {
		b.Fatal(err)
	}
	rev := int64(1)
	b.ReportAllocs()
	for b.Loop() {
		var wg sync.WaitGroup
		for i := range waiters {
			target := rev + int64(i) + 1
			wg.Go(func() {
				if err := c.WaitFor(ctx, target); err != nil {
					b.Error(err)
				}
			})
		}
		for range waiters {
			rev++
			src.feed <- store.Event[cacheSpec, cacheStatus]{Revision: rev, Progress: true}
		}
		wg.Wait()
	}
}
