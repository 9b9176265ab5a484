package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// benchController sets up n groups in memstore, a synced cache and an empty
// fleet without faults, and returns the controller that reconciles them.
func benchController(b *testing.B, ctx context.Context, n int) (*controller, []string) {
	b.Helper()
	backend := memstore.New(memstore.WithHistorySize(max(memstore.DefaultHistorySize, n)))
	groups, err := store.New[GroupSpec, GroupStatus](backend, "Group")
	require.NoError(b, err)
	_, err = createGroups(ctx, groups, n, rand.New(rand.NewPCG(1, 0xc4a05)))
	require.NoError(b, err)
	c := cache.New(groups)
	go func() { _ = c.Run(ctx) }()
	require.NoError(b, c.WaitForSync(ctx))
	return &controller{groups: groups, cache: c, fleet: newFleet(1, 0), count: &counters{}}, c.Keys()
}

func reconcileAll(b *testing.B, ctx context.Context, ctl *controller, names []string) {
	for _, name := range names {
		if _, err := ctl.Reconcile(ctx, name); err != nil {
			b.Fatal(err)
		}
	}
}

// The controller's reconcile path at 1k, 10k and 100k groups, reported per
// group: it must stay flat as the fleet grows (the fleet's lookups once
// scanned every instance, which made it grow with the fleet).
//
//   - rollout: the first reconcile of every group: create its instances and
//     write a Progressing status (store writes, which the cache then sees).
//   - steady: a reconcile of a converged group: observe, compare, write
//     nothing (what resync costs per group).
func BenchmarkReconcile(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("rollout/groups=%d", n), func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				b.StopTimer()
				ctx, cancel := context.WithCancel(context.Background())
				ctl, names := benchController(b, ctx, n)
				b.StartTimer()
				start := time.Now()
				reconcileAll(b, ctx, ctl, names)
				total += time.Since(start)
				b.StopTimer()
				cancel()
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N*n), "ns/group")
		})
		b.Run(fmt.Sprintf("steady/groups=%d", n), func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ctl, names := benchController(b, ctx, n)
			reconcileAll(b, ctx, ctl, names) // create the instances
			ctl.fleet.step(time.Now().Add(time.Hour))
			reconcileAll(b, ctx, ctl, names) // write Ready
			rev, err := ctl.groups.List(ctx, store.ListOptions{Limit: 1})
			require.NoError(b, err)
			require.NoError(b, ctl.cache.WaitFor(ctx, rev.Revision))
			writes := ctl.count.statusWrites.Load() + ctl.count.fleetWrites.Load()
			b.ResetTimer()
			for b.Loop() {
				reconcileAll(b, ctx, ctl, names)
			}
			b.StopTimer()
			require.Equal(b, writes, ctl.count.statusWrites.Load()+ctl.count.fleetWrites.Load(), "a converged group is not written")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/group")
		})
	}
}

// The controller's orphans, listed at every resync: at 100,000 groups it
// reads every group the fleet knows, and finds each in the cache.
func BenchmarkOrphans(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctl, names := benchController(b, ctx, 100_000)
	reconcileAll(b, ctx, ctl, names) // the fleet knows every group
	b.ReportAllocs()
	for b.Loop() {
		for range ctl.orphans() {
			b.Fatal("an orphan")
		}
	}
}
