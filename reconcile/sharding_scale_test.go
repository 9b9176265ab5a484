package reconcile

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/shard"
	"github.com/steady-go/steady/store/memstore"
)

// Replicas divide the work of a Loop whose reconcile waits 5ms on an
// external call (one worker each): in virtual time, 1000 keys take 5s on
// one replica, and 2 and 4 replicas are at least 1.8 and 3.4 times as fast
// (the targets) once the shards have settled (seen: 1.85× and
// 3.77×). The Loop is as fast as its busiest replica: every replica owns
// its share of the 256 shards within one (shard.Rebalance), and keys spread
// over shards by hash, so with 4 keys per shard the busiest replica has a
// few percent more keys than its share (541 of 1000 with 2 replicas). Under
// testing/synctest a sleep costs no CPU: this measures the split, not the
// machine.
func TestShardedThroughputScales(t *testing.T) {
	const keys = 1000
	took := map[int]time.Duration{}
	for _, n := range []int{1, 2, 4} {
		synctest.Test(t, func(t *testing.T) { took[n] = shardedRun(t, n, keys) })
		t.Logf("%d replicas: %v virtual for %d keys, %.0f keys/s, %.2f× one replica",
			n, took[n], keys, keys/took[n].Seconds(), took[1].Seconds()/took[n].Seconds())
	}
	require.Equal(t, 5*time.Second, took[1])
	require.GreaterOrEqual(t, took[1].Seconds()/took[2].Seconds(), 1.8)
	require.GreaterOrEqual(t, took[1].Seconds()/took[4].Seconds(), 3.4)
}

func shardedRun(t *testing.T, replicas, keys int) time.Duration {
	mem := memstore.New()
	var left atomic.Int64
	left.Store(int64(keys))
	done := make(chan struct{})
	r := Func[string](func(ctx context.Context, key string) (Result, error) {
		time.Sleep(5 * time.Millisecond)
		if left.Add(-1) == 0 {
			close(done)
		}
		return Result{}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var loops []*Loop[string]
	for i := range replicas {
		sh, err := shard.New(mem, "bench", fmt.Sprint("r", i), shard.WithRetryPeriod(100*time.Millisecond))
		require.NoError(t, err)
		l, err := New[string]("bench", r, nil, WithSharding(sh))
		require.NoError(t, err)
		loops = append(loops, l)
		wg.Go(func() { _ = l.Run(ctx) })
	}
	time.Sleep(time.Second) // the shards settle
	synctest.Wait()
	start := time.Now()
	for k := range keys {
		for _, l := range loops {
			l.Add(fmt.Sprint("key-", k)) // each replica keeps the keys it owns
		}
	}
	<-done
	took := time.Since(start)
	cancel()
	wg.Wait()
	return took
}
