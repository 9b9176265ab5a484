package reconcile

import (
	"context"
	"fmt"
	"slices"
	"sync"
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

// fleet is replicas of one sharded Loop on one memstore, each with its own
// cache, recording who reconciled which key and any overlap.
type fleet struct {
	t   *testing.T
	mem *memstore.Store
	// filtered gives each replica's cache cache.WithKeep(its Sharder's
	// Caches), and records every reconcile that found its object missing
	// from its replica's cache in unseen.
	filtered bool
	unseen   []string

	mu       sync.Mutex
	running  map[string]string         // key → replica reconciling it now
	by       map[string]map[string]int // key → replica → reconciles
	overlaps []string
}

type member struct {
	id    string
	env   *env
	sh    *shard.Sharder
	loop  *Loop[string]
	stop  func() error
	fence map[string]store.Fence // key → fence of its last reconcile
}

const shardTTL, shardRetry = 3 * time.Second, 500 * time.Millisecond

func (f *fleet) start(id string, opts ...shard.Option) *member {
	t := f.t
	sh, err := shard.New(f.mem, "apps", id, append([]shard.Option{shard.WithShards(16), shard.WithTTL(shardTTL), shard.WithRetryPeriod(shardRetry)}, opts...)...)
	require.NoError(t, err)
	var copts []cache.Option
	if f.filtered {
		copts = append(copts, cache.WithKeep(sh.Caches))
	}
	e := newEnv(t, "App", f.mem, copts...)
	t.Cleanup(e.stop)
	m := &member{id: id, env: e, sh: sh}
	r := scriptFunc(func(ctx context.Context, key string) (Result, error) {
		f.mu.Lock()
		if other, ok := f.running[key]; ok {
			f.overlaps = append(f.overlaps, fmt.Sprintf("%s: %s and %s", key, other, id))
		}
		f.running[key] = id
		if f.by[key] == nil {
			f.by[key] = map[string]int{}
		}
		f.by[key][id]++
		if _, cached := e.cache.Get(key); !cached && f.filtered {
			f.unseen = append(f.unseen, key+" on "+id)
		}
		f.mu.Unlock()
		defer func() { f.mu.Lock(); delete(f.running, key); f.mu.Unlock() }()
		time.Sleep(10 * time.Millisecond) // an external call
		_, err := e.st.As("app").ApplyStatus(ctx, key, appStatus{Phase: "done"}, nil)
		return Result{}, err
	})
	m.loop = mustNew(t, r, FromStore(e.cache, e.st), WithSharding(sh), WithWorkers(2))
	m.stop = start(t, m.loop)
	return m
}

func newFleet(t *testing.T) *fleet {
	return &fleet{t: t, mem: memstore.New(), running: map[string]string{}, by: map[string]map[string]int{}}
}

func (f *fleet) create(t *testing.T, e *env, names ...string) {
	for _, n := range names {
		e.create(t, "user", &app{Meta: store.Meta{Name: n}})
	}
}

// converged requires every object to be done, and reconciled by the
// member of ms that owns its shard now.
func (f *fleet) converged(t *testing.T, e *env, names []string, ms ...*member) {
	t.Helper()
	owner := map[int]string{}
	for _, m := range ms {
		for _, i := range m.sh.Status().Owned {
			owner[i] = m.id
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Empty(t, f.overlaps, "no key is reconciled by two replicas at once")
	for _, n := range names {
		require.Equal(t, "done", e.get(t, n).Status.Phase, n)
		want, ok := owner[shard.Of(n, 16)]
		require.True(t, ok, "%s's shard is owned by one of the replicas", n)
		require.Contains(t, f.by[n], want, "%s is reconciled by its shard's owner", n)
	}
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

// Three sharded replicas split the keys: each key is reconciled by its
// shard's owner only. When one leaves, its shards move to the others, which
// reconcile the keys that arrive later; never two replicas on one key.
func TestShardedLoopsSplitKeysAndHandOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t)
		a, b, c := f.start("a"), f.start("b"), f.start("c")
		time.Sleep(3 * shardRetry) // the first to join takes every shard, then hands most over
		synctest.Wait()
		first := names("first", 60)
		f.create(t, a.env, first...)
		time.Sleep(4 * shardRetry)
		synctest.Wait()
		f.converged(t, a.env, first, a, b, c)
		f.mu.Lock()
		for _, n := range first {
			require.Len(t, f.by[n], 1, "%s: reconciled by one replica only: %v", n, f.by[n])
		}
		f.mu.Unlock()
		info := a.loop.Info()
		require.NotNil(t, info.Sharding)
		require.Equal(t, a.sh.Status().Owned, info.Sharding.Owned)

		require.NoError(t, b.stop())
		time.Sleep(2 * shardRetry) // well under the TTL: b released its shards
		synctest.Wait()
		later := names("later", 30)
		f.create(t, a.env, later...)
		time.Sleep(2 * shardRetry)
		synctest.Wait()
		f.converged(t, a.env, later, a, c)
		require.NoError(t, a.stop())
		require.NoError(t, c.stop())
	})
}

// A replica that crashes (cut off, its lease expiring) has its shards
// taken after the TTL; its keys' late writes are refused with ErrFenced.
func TestShardedLoopCrashedReplicaIsFenced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t)
		a, b := f.start("a"), f.start("b")
		time.Sleep(3 * shardRetry)
		synctest.Wait()
		i := a.sh.Status().Owned[0]
		fence := a.sh.Fence(i)
		require.NoError(t, a.stop()) // releases: b takes i at once
		time.Sleep(2 * shardRetry)
		synctest.Wait()
		require.Contains(t, b.sh.Status().Owned, i)
		b.env.create(t, "user", &app{Meta: store.Meta{Name: "x"}})
		_, err := a.env.st.As("app").ApplyStatus(store.WithFence(context.Background(), fence), "x", appStatus{Phase: "stale"}, nil)
		require.ErrorIs(t, err, store.ErrFenced, "a write under a released shard's fence is refused")
		require.NoError(t, b.stop())
	})
}

func TestWithShardingRefusesMisuse(t *testing.T) {
	_, err := New[string]("l", newScript(nil), nil, WithSharding(nil))
	require.ErrorIs(t, err, ErrInvalidOption)
	sh, err := shard.New(memstore.New(), "l", "a")
	require.NoError(t, err)
	_, err = New[string]("l", newScript(nil), nil, WithSharding(sh), WithElector(&handElector{}))
	require.ErrorIs(t, err, ErrInvalidOption)

	// SetSharding (manager.WithSharding's way in) refuses the same.
	l := mustNew(t, newScript(nil), nil)
	require.ErrorIs(t, l.SetSharding(nil), ErrInvalidOption)
	require.NoError(t, l.SetSharding(sh))
	require.ErrorIs(t, l.SetSharding(sh), ErrInvalidOption, "already sharded")
	require.ErrorIs(t, mustNew(t, newScript(nil), nil, WithElector(&handElector{})).SetSharding(sh), ErrInvalidOption)
}

// The Loop's own writes for a key whose shard this replica does not hold
// carry a fence that never holds: they are refused as fenced, not as
// invalid.
func TestShardFencedWritesOfAnUnheldShardAreFenced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "x"}})
		sh, err := shard.New(e.b, "apps", "a")
		require.NoError(t, err)
		l := mustNew(t, newScript(nil), nil, WithSharding(sh))
		_, err = e.st.As("app").ApplyStatus(l.shardFenced(context.Background(), "x"), "x", appStatus{Phase: "late"}, nil)
		require.ErrorIs(t, err, store.ErrFenced)
	})
}

// When the drain times out on a reconcile that ignores its ctx, Run still
// returns only after the sharder has released its shards and left (no
// goroutine of the Loop outlives Run), and without waiting for the stuck
// reconcile: the sharder waits for it at most the TTL, then its writes are
// fenced.
func TestShardedLoopRunReturnsAfterTheSharderLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "x"}})
		sh, err := shard.New(e.b, "apps", "a", shard.WithShards(4), shard.WithTTL(shardTTL), shard.WithRetryPeriod(shardRetry))
		require.NoError(t, err)
		entered, unblock := make(chan struct{}), make(chan struct{})
		defer close(unblock)
		r := scriptFunc(func(ctx context.Context, key string) (Result, error) {
			close(entered)
			<-unblock // ignores ctx
			return Result{}, nil
		})
		l := mustNew(t, r, FromStore(e.cache, e.st), WithSharding(sh), WithDrainTimeout(time.Second))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- l.Run(ctx) }()
		<-entered
		begin := time.Now()
		cancel()
		err = <-done
		require.ErrorIs(t, err, ErrDrainTimeout)
		require.False(t, sh.Status().Member, "Run returned while the sharder was still leaving")
		kvs, err := e.b.List(context.Background(), "_shards/", kv.ListOptions{})
		require.NoError(t, err)
		require.Empty(t, kvs.KVs, "the shard and member keys are released when Run returns")
		require.LessOrEqual(t, time.Since(begin), shardTTL+time.Second, "Run waits at most the TTL for the stuck reconcile, plus the drain of the rest")
	})
}

// cachesOnlyTheirShards requires each replica's cache to hold exactly the
// objects among names of the shards it holds.
func cachesOnlyTheirShards(t *testing.T, all []string, ms ...*member) {
	t.Helper()
	for _, m := range ms {
		var want []string
		for _, n := range all {
			if m.sh.Caches(n) {
				want = append(want, n)
			}
		}
		slices.Sort(want)
		require.Equal(t, want, m.env.cache.Keys(), "%s caches its shards' objects only", m.id)
		require.Less(t, len(want), len(all), "%s caches a part of the kind", m.id)
	}
}

// With cache.WithKeep(Sharder.Caches), each replica caches only its
// shards' objects, and follows the shards as they move: a joiner and the
// replicas that take a leaver's shards list them before reconciling any of
// their keys (no reconcile finds its object missing from its cache), and
// the replicas that let shards go drop their objects.
func TestShardedLoopsCacheOnlyTheirShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t)
		f.filtered = true
		a, b := f.start("a"), f.start("b")
		time.Sleep(3 * shardRetry)
		synctest.Wait()
		first := names("first", 90)
		f.create(t, a.env, first...)
		time.Sleep(4 * shardRetry)
		synctest.Wait()
		f.converged(t, a.env, first, a, b)
		cachesOnlyTheirShards(t, first, a, b)

		c := f.start("c")
		time.Sleep(4 * shardRetry)
		synctest.Wait()
		cachesOnlyTheirShards(t, first, a, b, c)
		later := names("later", 30)
		f.create(t, a.env, later...)
		time.Sleep(2 * shardRetry)
		synctest.Wait()
		f.converged(t, a.env, later, a, b, c)

		require.NoError(t, b.stop())
		time.Sleep(3 * shardRetry)
		synctest.Wait()
		all := append(first, later...)
		cachesOnlyTheirShards(t, all, a, c)
		last := names("last", 30)
		f.create(t, a.env, last...)
		time.Sleep(2 * shardRetry)
		synctest.Wait()
		f.converged(t, a.env, last, a, c)
		f.mu.Lock()
		require.Empty(t, f.unseen, "every reconcile found its object in its replica's cache")
		f.mu.Unlock()
		require.NoError(t, a.stop())
		require.NoError(t, c.stop())
	})
}
