package reconcile

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// What a sharded replica's cache costs: each replica's FromStore cache holds
// the whole kind, not its shards' objects, so the heap per replica does not
// shrink with replicas (README "Scaling out"). Each iteration syncs the
// caches of a fleet of 1 or 3 replicas over 10k objects and reports the heap
// they add, per replica.
//
//	GOWORK=off go test -run '^$' -bench BenchmarkShardedCacheHeapPerReplica -benchtime 2x ./reconcile/
func BenchmarkShardedCacheHeapPerReplica(b *testing.B) {
	const objects = 10_000
	mem := memstore.New()
	st, err := store.New[appSpec, appStatus](mem, "App")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := range objects {
		if _, err := st.As("user").Create(ctx, &app{Meta: store.Meta{Name: fmt.Sprintf("app-%05d", i)}, Spec: appSpec{Replicas: 3, Image: "registry.example/app:v1"}}); err != nil {
			b.Fatal(err)
		}
	}
	for _, replicas := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas=%d", replicas), func(b *testing.B) {
			b.ReportAllocs()
			var perReplica float64
			for b.Loop() {
				before := heapInUse()
				cctx, cancel := context.WithCancel(ctx)
				var wg sync.WaitGroup
				caches := make([]*cache.Cache[appSpec, appStatus], replicas)
				for r := range caches {
					caches[r] = cache.New[appSpec, appStatus](st)
					wg.Go(func() { _ = caches[r].Run(cctx) })
				}
				for _, c := range caches {
					if err := c.WaitForSync(cctx); err != nil {
						b.Fatal(err)
					}
					if c.Len() != objects {
						b.Fatalf("cache holds %d objects, want %d", c.Len(), objects)
					}
				}
				perReplica = float64(heapInUse()-before) / float64(replicas)
				runtime.KeepAlive(caches)
				cancel()
				wg.Wait()
			}
			b.ReportMetric(perReplica, "heapB/replica")
			b.ReportMetric(perReplica/objects, "heapB/object")
		})
	}
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}
