package reconciletest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

type rspec struct {
	Replicas int `json:"replicas"`
}

type rstatus struct {
	Replicas int `json:"replicas"`
}

// replicasConfig is a user's reconciler as RunReplicas takes it: it copies
// spec.replicas to status after an external call of up to 20ms.
func replicasConfig(converge func(spec int) int) reconciletest.Replicas[rspec, rstatus] {
	return reconciletest.Replicas[rspec, rstatus]{
		Objects: 100,
		Object: func(i int, _ *rand.Rand) *store.Object[rspec, rstatus] {
			return &store.Object[rspec, rstatus]{Spec: rspec{Replicas: 1}}
		},
		Change: func(_ string, rng *rand.Rand) any { return map[string]any{"replicas": 1 + rng.IntN(9)} },
		Setup: func(st *store.Store[rspec, rstatus], c *cache.Cache[rspec, rstatus]) (reconcile.Reconciler[string], error) {
			return reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
				obj, ok := c.Get(key)
				if !ok {
					return reconcile.Result{}, nil
				}
				time.Sleep(time.Duration(len(key)) * 4 * time.Millisecond) // an external call
				_, err := st.As("ctl").ApplyStatus(ctx, key, rstatus{Replicas: converge(obj.Spec.Replicas)}, nil)
				return reconcile.Result{}, store.IgnoreNotFound(err)
			}), nil
		},
		Converged: func(o *store.Object[rspec, rstatus]) error {
			if o.Status.Replicas != o.Spec.Replicas {
				return fmt.Errorf("spec %d status %d", o.Spec.Replicas, o.Status.Replicas)
			}
			return nil
		},
	}
}

// TestReplicas runs seeded schedules of a user's reconciler as three or more
// sharded replicas under crashes, partitions, lease expiries, joins and
// leaves (reconciletest.RunReplicas). Under the race detector, 2 of the 8
// schedules (sweepSeeds); scripts/test.sh runs all 8 without it
// (sweepsWithoutRace).
func TestReplicas(t *testing.T) {
	cfg := replicasConfig(func(spec int) int { return spec })
	cfg.Schedules = int(sweepSeeds(8))
	if testing.Short() {
		cfg.Schedules = 2
	}
	reconciletest.RunReplicas(t, cfg)
}

// The same schedules with each replica caching only its shards' objects
// (cache.WithKeep(Sharder.Caches)), more shards, a shorter TTL and more
// faults: every object still converges, with no overlap and no stale write.
// A replica that reconciled a key before its cache listed the key's shard
// would find no object and leave the key unconverged.
func TestReplicasCachingTheirShards(t *testing.T) {
	cfg := replicasConfig(func(spec int) int { return spec })
	cfg.CacheShards = true
	cfg.Shards, cfg.TTL, cfg.RetryPeriod, cfg.Faults = 64, 2*time.Second, 250*time.Millisecond, 16
	cfg.Seed, cfg.Schedules = 100, 4
	if testing.Short() {
		cfg.Schedules = 1
	}
	reconciletest.RunReplicas(t, cfg)
}
