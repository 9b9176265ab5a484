package prometheus_test

import (
	"context"
	"iter"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	steadyprom "github.com/steady-go/steady/metrics/prometheus"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/shard"
	"github.com/steady-go/steady/store/memstore"
)

// A sharded Loop's replica exports how many shards it owns and hands over,
// and its queue per shard.
func TestShardSeries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prom.NewRegistry()
		m, err := steadyprom.New(reg)
		require.NoError(t, err)
		sh, err := shard.New(memstore.New(), "app", "replica-0", shard.WithShards(4))
		require.NoError(t, err)
		keys := []string{"a", "b", "c", "d", "e", "f"}
		r := reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) {
			return reconcile.Result{RequeueAfter: time.Hour}, nil
		})
		loop, err := reconcile.New("app", r, reconcile.Keys(func() iter.Seq[string] { return slices.Values(keys) }),
			reconcile.WithMetrics(m), reconcile.WithSharding(sh))
		require.NoError(t, err)
		require.NoError(t, m.AddLoop(loop))
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- loop.Run(ctx) }()
		time.Sleep(time.Second)
		synctest.Wait()

		got, err := reg.Gather()
		require.NoError(t, err)
		fams := map[string]*dto.MetricFamily{}
		for _, f := range got {
			fams[f.GetName()] = f
		}
		require.Equal(t, 4.0, value(t, fams, "steady_shards", map[string]string{"controller": "app", "state": "owned"}))
		require.Equal(t, 0.0, value(t, fams, "steady_shards", map[string]string{"controller": "app", "state": "moving"}))
		perShard := map[int]int{}
		for _, k := range keys {
			perShard[shard.Of(k, 4)]++
		}
		for i := range 4 {
			require.Equal(t, float64(perShard[i]), value(t, fams, "steady_shard_queue_keys",
				map[string]string{"controller": "app", "shard": strconv.Itoa(i)}), "shard %d", i)
		}
		cancel()
		require.NoError(t, <-errc)
	})
}
