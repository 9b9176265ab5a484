package bench

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/util/workqueue"

	"github.com/steady-go/steady/bench/internal/ctlbench"
	"github.com/steady-go/steady/queue"
)

// queueKeys are the keys BenchmarkParallelAdd4W cycles through.
var queueKeys = func() []string {
	k := make([]string, 10_000)
	for i := range k {
		k[i] = "ns/obj-" + strconv.Itoa(i)
	}
	return k
}()

// BenchmarkParallelAdd4W is queuecmp's parallel-add-4-workers pair
// (/work/shared/bench/compare.sh): GOMAXPROCS goroutines add 10k keys
// cycled while four workers Get and Done them. Each op is one Add.
//
// Its wall time per op is a poor figure on its own, for two reasons it
// reports next to ns/op:
//
//   - cpu-ns/op, the process's CPU time per Add: on a shared machine the
//     wall time is mostly how much CPU the process got;
//   - gets/add, the keys the workers took per Add: the benchmark is a
//     feedback loop. An Add of a key still queued is a lookup; an Add of a
//     key the workers took is an insert, a wake-up and a Get and Done. How
//     the adders and workers happen to share the CPUs sets the mix, and the
//     cost per op follows it.
//
// Compare the two sides from separate processes, rounds interleaved
// (controller.sh -p queue).
func BenchmarkParallelAdd4W(b *testing.B) {
	b.Run("steady", func(b *testing.B) {
		q := queue.New[string]()
		ctx := context.Background()
		parallelAdd(b, q.Add, func() (string, bool) { return q.Get(ctx) }, q.Done, q.ShutDown)
	})
	b.Run("client-go", func(b *testing.B) {
		q := workqueue.NewTyped[string]()
		get := func() (string, bool) {
			k, shut := q.Get()
			return k, !shut
		}
		parallelAdd(b, q.Add, get, q.Done, q.ShutDown)
	})
}

func parallelAdd(b *testing.B, add func(string), get func() (string, bool), done func(string), shutDown func()) {
	var gets atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				k, ok := get()
				if !ok {
					return
				}
				gets.Add(1)
				done(k)
			}
		})
	}
	b.ReportAllocs()
	cpu0 := ctlbench.CPUTime()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			add(queueKeys[i%len(queueKeys)])
			i += 7
		}
	})
	shutDown()
	wg.Wait()
	b.ReportMetric(float64(ctlbench.CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(gets.Load())/float64(b.N), "gets/add")
}
