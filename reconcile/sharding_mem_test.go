package reconcile

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/steady-go/steady/shard"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// What a sharded replica's cache costs: without a filter each replica's
// FromStore cache holds the whole kind, so the heap per replica does not
// shrink with replicas; with cache.WithKeep(Sharder.Caches) it holds its
// shards' objects, about 1/N of the kind (README "Scaling out"). Each
// iteration syncs the caches of a fleet of 1 or 3 replicas over 10k objects
// (filtered: each keeping the shards shard.Assign gives it among 256) and
// reports the heap they add, per replica.
//
//	GOWORK=off go test -run '^$' -bench BenchmarkShardedCacheHeapPerReplica -benchtime 2x ./reconcile/
func BenchmarkShardedCacheHeapPerReplica(b *testing.B) {
	const objects, shards = 10_000, 256
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
	for _, filtered := range []bool{false, true} {
		for _, replicas := range []int{1, 3} {
			b.Run(fmt.Sprintf("filtered=%v/replicas=%d", filtered, replicas), func(b *testing.B) {
				b.ReportAllocs()
				ids := make([]string, replicas)
				for r := range ids {
					ids[r] = fmt.Sprint("r", r)
				}
				owner := shard.Assign(ids, shards)
				var perReplica float64
				for b.Loop() {
					before := heapInUse()
					cctx, cancel := context.WithCancel(ctx)
					var wg sync.WaitGroup
					caches := make([]*cache.Cache[appSpec, appStatus], replicas)
					held := 0
					for r := range caches {
						var opts []cache.Option
						if filtered {
							opts = append(opts, cache.WithKeep(func(name string) bool { return owner[shard.Of(name, shards)] == ids[r] }))
						}
						caches[r] = cache.New[appSpec, appStatus](st, opts...)
						wg.Go(func() { _ = caches[r].Run(cctx) })
					}
					for _, c := range caches {
						if err := c.WaitForSync(cctx); err != nil {
							b.Fatal(err)
						}
						held += c.Len()
					}
					if held != objects && filtered || held != replicas*objects && !filtered {
						b.Fatalf("caches hold %d objects in all", held)
					}
					perReplica = float64(heapInUse()-before) / float64(replicas)
					runtime.KeepAlive(caches)
					cancel()
					wg.Wait()
				}
				b.ReportMetric(perReplica, "heapB/replica")
			})
		}
	}
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}
