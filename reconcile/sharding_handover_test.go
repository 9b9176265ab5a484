package reconcile

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/shard"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// countingBackend counts what one replica's Store reads of the kind
// through List.
type countingBackend struct {
	kv.Backend
	kind          string // the kind's key prefix
	lists, listed atomic.Int64
}

func (b *countingBackend) List(ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
	l, err := b.Backend.List(ctx, prefix, opts)
	if strings.HasPrefix(prefix, b.kind) {
		if opts.Continue == "" {
			b.lists.Add(1)
		}
		b.listed.Add(int64(len(l.KVs)))
	}
	return l, err
}

// handoverReplica is one replica of a sharded Loop whose cache keeps its
// shards' objects, reading the kind through its own countingBackend.
type handoverReplica struct {
	id    string
	b     *countingBackend
	sh    *shard.Sharder
	cache *cache.Cache[appSpec, appStatus]
	stop  func()
}

// cost is what a replica read and decoded between two snapshots.
type cost struct{ lists, listed, decoded int64 }

// snapshot returns the replica's counters and the objects its cache holds.
func (r *handoverReplica) snapshot() (cost, map[*app]bool) {
	held := map[*app]bool{}
	for _, o := range r.cache.List(nil) {
		held[o] = true
	}
	return cost{lists: r.b.lists.Load(), listed: r.b.listed.Load()}, held
}

// since is the cost from before (and the objects then held) to now: an
// object the cache holds now that it did not hold then was decoded (a
// listing reuses the cached object at its revision).
func (r *handoverReplica) since(before cost, held map[*app]bool) cost {
	now, objs := r.snapshot()
	c := cost{lists: now.lists - before.lists, listed: now.listed - before.listed}
	for o := range objs {
		if !held[o] {
			c.decoded++
		}
	}
	return c
}

// A handover costs what moves, not the kind: at 10,000 objects and 256
// shards, a replica that lets shards go (a join) reads nothing from the
// backend and decodes nothing, it drops their objects from memory; a
// replica that takes shards (a leave) decodes only their objects. No
// backend can list one shard's keys (a key's shard is a hash of its name),
// so a taking replica reads the kind's keys once per round in which it
// takes shards, however many it takes, skipping the others' values
// undecoded.
func TestShardHandoverCostsWhatMoves(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 objects")
	}
	objects := int64(10_000)
	if raceEnabled {
		objects = 2_000 // the same handovers, in a tenth of the race detector's time
	}
	synctest.Test(t, func(t *testing.T) {
		const shards = 256
		mem := memstore.New()
		st, err := store.New[appSpec, appStatus](mem, "App")
		require.NoError(t, err)
		ctx := context.Background()
		for i := range objects {
			_, err := st.As("user").Create(ctx, &app{Meta: store.Meta{Name: fmt.Sprintf("app-%05d", i)}, Spec: appSpec{Replicas: 1}})
			require.NoError(t, err)
		}
		kindPrefix := st.Prefix()
		var reconciles atomic.Int64
		r := Func[string](func(context.Context, string) (Result, error) { reconciles.Add(1); return Result{}, nil })
		start := func(id string) *handoverReplica {
			sh, err := shard.New(mem, "apps", id, shard.WithShards(shards), shard.WithTTL(shardTTL), shard.WithRetryPeriod(shardRetry))
			require.NoError(t, err)
			b := &countingBackend{Backend: mem, kind: kindPrefix}
			rst, err := store.New[appSpec, appStatus](b, "App")
			require.NoError(t, err)
			c := cache.New[appSpec, appStatus](rst, cache.WithKeep(sh.Caches))
			l := mustNew(t, r, FromStore(c, rst), WithSharding(sh), WithWorkers(4))
			cctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Go(func() { _ = c.Run(cctx) })
			wg.Go(func() { _ = l.Run(cctx) })
			rp := &handoverReplica{id: id, b: b, sh: sh, cache: c, stop: func() { cancel(); wg.Wait() }}
			t.Cleanup(rp.stop)
			return rp
		}
		settle := func() {
			time.Sleep(6 * shardRetry)
			synctest.Wait()
		}
		keysOf := func(owned []int) int64 {
			in := map[int]bool{}
			for _, i := range owned {
				in[i] = true
			}
			n := int64(0)
			for i := range objects {
				if in[shard.Of(fmt.Sprintf("app-%05d", i), shards)] {
					n++
				}
			}
			return n
		}
		olds := []*handoverReplica{start("a"), start("b"), start("c")}
		settle()

		// A join: the three old replicas let a quarter of their shards go.
		type before struct {
			c     cost
			held  map[*app]bool
			owned []int
		}
		snap := func(rs []*handoverReplica) []before {
			var out []before
			for _, r := range rs {
				c, held := r.snapshot()
				out = append(out, before{c, held, r.sh.Status().Owned})
			}
			return out
		}
		was := snap(olds)
		d := start("d")
		settle()
		for i, r := range olds {
			c := r.since(was[i].c, was[i].held)
			let := len(was[i].owned) - len(r.sh.Status().Owned)
			t.Logf("join: %s let %d shards go (%d keys): %d listings, %d keys read, %d objects decoded, %d cached now",
				r.id, let, keysOf(was[i].owned)-keysOf(r.sh.Status().Owned), c.lists, c.listed, c.decoded, r.cache.Len())
			require.Positive(t, let, "%s let shards go", r.id)
			require.Equal(t, cost{}, c, "%s let shards go without reading or decoding", r.id)
			require.EqualValues(t, keysOf(r.sh.Status().Owned), r.cache.Len(), "%s caches its shards' objects only", r.id)
		}

		// A leave: d's shards go to the three others.
		was = snap(olds)
		d.stop()
		settle()
		var moved int64
		for i, r := range olds {
			c := r.since(was[i].c, was[i].held)
			gained := keysOf(r.sh.Status().Owned) - keysOf(was[i].owned)
			moved += gained
			t.Logf("leave: %s took %d shards (%d keys): %d listings, %d keys read, %d objects decoded",
				r.id, len(r.sh.Status().Owned)-len(was[i].owned), gained, c.lists, c.listed, c.decoded)
			require.Equal(t, gained, c.decoded, "%s decoded the objects of the shards it took, no other", r.id)
			require.LessOrEqual(t, c.lists, int64(1), "%s listed the kind at most once", r.id)
			// A page of kept objects that fills in the middle of a backend
			// page reads that page's rest again for the next one.
			pages := int64(r.cache.Len()/cache.DefaultPageSize + 1)
			require.LessOrEqual(t, c.listed, objects+pages*cache.DefaultPageSize, "%s read the kind's keys once, and at most a page again per page kept", r.id)
		}
		t.Logf("leave: %d keys moved", moved)
	})
}
