package debugpage_test

import (
	"context"
	"iter"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/debugpage"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/shard"
	"github.com/steady-go/steady/store/memstore"
)

// A sharded Loop's row says it is sharded and which shards it owns, which
// are moving, and how many keys wait per shard.
func TestAPIShowsShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sh, err := shard.New(memstore.New(), "apps", "replica-0", shard.WithShards(4))
		require.NoError(t, err)
		r := reconcile.Func[string](func(_ context.Context, key string) (reconcile.Result, error) {
			return reconcile.Result{RequeueAfter: time.Hour}, nil
		})
		keys := []string{"a", "b", "c", "d", "e", "f"}
		l, err := reconcile.New("apps", r, reconcile.Keys(func() iter.Seq[string] { return slices.Values(keys) }),
			reconcile.WithSharding(sh))
		require.NoError(t, err)
		page := debugpage.New()
		require.NoError(t, page.AddLoop(l))
		stop := run(t, l)
		time.Sleep(time.Second)
		synctest.Wait()

		loops := decode[[]debugpage.LoopView](t, get(t, page, "/api/loops"))
		require.Len(t, loops, 1)
		require.Equal(t, "sharded", loops[0].Role)
		s := loops[0].Sharding
		require.NotNil(t, s)
		require.True(t, s.Member)
		require.Equal(t, []int{0, 1, 2, 3}, s.Owned, "the only replica owns every shard")
		require.Empty(t, s.Moving)
		perShard := map[int]int{}
		for _, k := range keys {
			perShard[shard.Of(k, 4)]++ // each key waits for its RequeueAfter
		}
		require.Equal(t, perShard, s.Queue)
		require.NoError(t, stop())
	})
}
