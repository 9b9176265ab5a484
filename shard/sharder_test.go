package shard_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/shard"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

const (
	ttl   = 3 * time.Second
	retry = 500 * time.Millisecond
)

// partition makes every call hang until its ctx ends while cut, as a
// network partition does.
type partition struct {
	kv.Backend
	cut atomic.Bool
}

func (p *partition) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	if p.cut.Load() {
		<-ctx.Done()
		return kv.KeyValue{}, ctx.Err()
	}
	return p.Backend.Get(ctx, key)
}

func (p *partition) List(ctx context.Context, prefix string, o kv.ListOptions) (kv.List, error) {
	if p.cut.Load() {
		<-ctx.Done()
		return kv.List{}, ctx.Err()
	}
	return p.Backend.List(ctx, prefix, o)
}

func (p *partition) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if p.cut.Load() {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return p.Backend.Txn(ctx, conds, w)
}

type replica struct {
	s      *shard.Sharder
	b      *partition
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	gained []int
}

// start runs r as the Loop does: Join, Serve, again, until ctx ends.
func start(t *testing.T, mem kv.Backend, id string, opts ...shard.Option) *replica {
	t.Helper()
	b := &partition{Backend: mem}
	s, err := shard.New(b, "loop", id, append([]shard.Option{shard.WithTTL(ttl), shard.WithRetryPeriod(retry)}, opts...)...)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{s: s, b: b, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for ctx.Err() == nil {
			term, err := s.Join(ctx)
			if err != nil {
				return
			}
			s.Serve(term, shard.Hooks{Gained: func(g []int) { r.mu.Lock(); r.gained = append(r.gained, g...); r.mu.Unlock() }})
		}
	}()
	return r
}

func (r *replica) stop() { r.cancel(); <-r.done }

// settle lets d of virtual time pass and every replica act on it.
func settle(d time.Duration) { time.Sleep(d); synctest.Wait() }

// owners returns each shard's owners as the replicas see them.
func owners(S int, rs ...*replica) [][]string {
	out := make([][]string, S)
	for _, r := range rs {
		for _, i := range r.s.Status().Owned {
			out[i] = append(out[i], r.s.Identity())
		}
	}
	return out
}

// split requires every shard owned by exactly one of rs, each owning its
// share within one shard, and returns each shard's owner.
func split(t *testing.T, S int, rs ...*replica) []string {
	t.Helper()
	out := make([]string, S)
	var ids []string
	for i, o := range owners(S, rs...) {
		require.Len(t, o, 1, "shard %d has one owner: %v", i, o)
		out[i] = o[0]
	}
	for _, r := range rs {
		ids = append(ids, r.s.Identity())
	}
	requireBalanced(t, ids, out)
	return out
}

// Three replicas split the shards as rendezvous hashing says, each shard
// owned by exactly one.
func TestReplicasSplitShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New()
		a, b, c := start(t, mem, "a", shard.WithShards(32)), start(t, mem, "b", shard.WithShards(32)), start(t, mem, "c", shard.WithShards(32))
		settle(3 * retry)
		split(t, 32, a, b, c)
		st := a.s.Status()
		require.Equal(t, []string{"a", "b", "c"}, st.Members)
		require.Empty(t, st.Moving)
		a.stop()
		b.stop()
		c.stop()
		keys, err := mem.List(context.Background(), "_shards/", kv.ListOptions{})
		require.NoError(t, err)
		require.Empty(t, keys.KVs, "leaving replicas delete their shard and member keys")
	})
}

// A leave moves only the leaver's shards, at once (it releases them); a
// join takes only the joiner's shards from their owners.
func TestJoinAndLeaveMoveOnlyTheirShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const S = 64
		mem := memstore.New()
		a, b := start(t, mem, "a", shard.WithShards(S)), start(t, mem, "b", shard.WithShards(S))
		settle(3 * retry)
		before := split(t, S, a, b)

		c := start(t, mem, "c", shard.WithShards(S))
		settle(3 * retry)
		joined := split(t, S, a, b, c)
		require.Equal(t, len(c.s.Status().Owned), movedBetween(before, joined), "only the shards c took moved")
		c.mu.Lock()
		gained := slices.Sorted(slices.Values(c.gained))
		c.mu.Unlock()
		require.Equal(t, c.s.Status().Owned, gained, "the joiner is told of each shard it took")

		b.stop()
		settle(2 * retry) // well under the TTL: b released its shards
		left := split(t, S, a, c)
		require.Equal(t, loads(joined)["b"], movedBetween(joined, left), "only b's shards moved")
		a.stop()
		c.stop()
	})
}

// A replica cut off from the store stops working at 2/3 of the TTL; its
// shards move only after the TTL, and a write carrying one of its old
// shard fences is refused by the store.
func TestPartitionedReplicaIsFenced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const S = 16
		mem := memstore.New()
		a, b := start(t, mem, "a", shard.WithShards(S)), start(t, mem, "b", shard.WithShards(S))
		settle(3 * retry)
		i := a.s.Status().Owned[0]
		lost, fence, ok := a.s.Enter(i)
		require.True(t, ok)

		a.b.cut.Store(true)
		settle(ttl / 2)
		require.NotContains(t, b.s.Status().Owned, i, "b waits for a's lease to expire")
		settle(ttl / 3)
		require.Error(t, lost.Err(), "a stopped work on its shards by 2/3 of the TTL")
		require.Empty(t, a.s.Status().Owned)
		settle(ttl)
		split(t, S, b) // b took every shard once a's lease expired

		_, err := mem.Txn(context.Background(), []kv.Cond{kv.Cond{Key: fence.Key, Target: kv.CreateRevision, Revision: fence.Revision}},
			kv.Write{Kind: kv.WritePut, Key: "kind/late", Value: []byte("{}")})
		require.ErrorIs(t, err, kv.ErrCondFailed, "a's late write is fenced")
		a.s.Exit(i)
		a.b.cut.Store(false)
		settle(ttl + 3*retry)
		split(t, S, a, b) // a rejoins and gets its share back
		a.stop()
		b.stop()
	})
}

// A shard that moves waits for its old owner's reconciles to return: the
// new owner takes it only after the last Exit.
func TestMovedShardWaitsForInflightReconciles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const S = 16
		mem := memstore.New()
		a := start(t, mem, "a", shard.WithShards(S))
		settle(2 * retry)
		var moving int = -1
		all := slices.Repeat([]string{"a"}, S)
		for i, o := range shard.Rebalance([]string{"a", "b"}, all) {
			if o == "b" {
				moving = i
				break
			}
		}
		require.GreaterOrEqual(t, moving, 0)
		lost, _, ok := a.s.Enter(moving)
		require.True(t, ok)

		b := start(t, mem, "b", shard.WithShards(S))
		settle(3 * retry)
		require.ErrorIs(t, context.Cause(lost), shard.ErrMoved, "a cancels the reconcile of a moving shard")
		require.False(t, a.s.Owns(moving))
		require.NotContains(t, b.s.Status().Owned, moving, "b waits while a's reconcile runs")
		require.Contains(t, b.s.Status().Moving, moving)
		_, _, ok = a.s.Enter(moving)
		require.False(t, ok, "no new reconcile starts in a releasing shard")

		a.s.Exit(moving)
		settle(2 * retry)
		require.Contains(t, b.s.Status().Owned, moving)
		a.stop()
		b.stop()
	})
}

// Replicas configured with different shard counts hold no shards and say
// why, rather than splitting keys two ways.
func TestShardCountMismatchHoldsNoShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New()
		a := start(t, mem, "a", shard.WithShards(8))
		settle(2 * retry)
		require.Len(t, a.s.Status().Owned, 8)
		b := start(t, mem, "b", shard.WithShards(16))
		settle(3 * retry)
		for _, r := range []*replica{a, b} {
			st := r.s.Status()
			require.Empty(t, st.Owned, r.s.Identity())
			require.Contains(t, st.Problem, "every replica must use the same number")
		}
		b.stop()
		settle(2 * retry)
		require.Len(t, a.s.Status().Owned, 8, "a takes its shards again once b left")
		a.stop()
	})
}

func TestNewRefusesBadInput(t *testing.T) {
	mem := memstore.New()
	var nilStore *memstore.Store
	for name, err := range map[string]error{
		"nil backend":    second(shard.New(nilStore, "l", "a")),
		"empty name":     second(shard.New(mem, "", "a")),
		"slash identity": second(shard.New(mem, "l", "a/b")),
		"zero shards":    second(shard.New(mem, "l", "a", shard.WithShards(0))),
		"bad renew":      second(shard.New(mem, "l", "a", shard.WithTTL(time.Second), shard.WithRenewInterval(time.Second))),
	} {
		require.Error(t, err, name)
	}
	_ = fmt.Sprint
}

func second[T any](_ T, err error) error { return err }

// A TTL too long to take 2/3 of is refused with an error that names the
// TTL and the limit, not the renew interval the user never set; the
// longest TTL is accepted.
func TestNewRefusesATTLAboveTheLimitNamingIt(t *testing.T) {
	mem := memstore.New()
	limit := time.Duration(math.MaxInt64 / 2)
	for _, ttl := range []time.Duration{limit + 1, math.MaxInt64} {
		_, err := shard.New(mem, "l", "a", shard.WithTTL(ttl))
		require.EqualError(t, err, fmt.Sprintf("shard: TTL %v is above the limit %v", ttl, limit))
	}
	s, err := shard.New(mem, "l", "a", shard.WithTTL(limit))
	require.NoError(t, err)
	require.NotNil(t, s)
}

// A second process started with a replica's identity does not join while
// the first renews: two replicas never act as one member.
func TestSameIdentityDoesNotJoinTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New()
		a := start(t, mem, "a", shard.WithShards(8))
		settle(2 * retry)
		twin := start(t, mem, "a", shard.WithShards(8))
		settle(3 * ttl)
		require.True(t, a.s.Status().Member)
		require.Len(t, a.s.Status().Owned, 8)
		require.False(t, twin.s.Status().Member, "the twin waits")
		a.stop()
		settle(ttl + 2*retry)
		require.True(t, twin.s.Status().Member, "and joins once the first left")
		twin.stop()
	})
}

// A crashed replica's shards move no earlier than the TTL after its last
// renewal and no later than the TTL plus two retry periods after it: the
// others time its key from the listing that first shows its last renewal,
// and act on the next listing after the TTL.
func TestCrashedReplicaShardsMoveWithinTTLPlusTwoRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const S = 16
		mem := memstore.New()
		a, b := start(t, mem, "a", shard.WithShards(S)), start(t, mem, "b", shard.WithShards(S))
		settle(3*retry + 123*time.Millisecond) // a crash at no particular moment
		a.b.cut.Store(true)
		cut := time.Now()
		for len(b.s.Status().Owned) < S {
			settle(10 * time.Millisecond)
		}
		took := time.Since(cut)
		renew := ttl / 3 // the last renewal is at most this long before the crash
		require.GreaterOrEqual(t, took, ttl-renew)
		require.LessOrEqual(t, took, ttl+2*retry)
		t.Logf("shards moved %v after the crash (TTL %v, renew %v, retry %v)", took, ttl, renew, retry)
		a.b.cut.Store(false)
		a.stop()
		b.stop()
	})
}

// slow delays every call by latency (virtual time under synctest), as a
// loaded store across a network does, and counts the calls that overlap.
type slow struct {
	kv.Backend
	latency time.Duration
	now     atomic.Int64 // calls in flight
	peak    atomic.Int64
}

func (s *slow) wait(ctx context.Context) error {
	n := s.now.Add(1)
	defer s.now.Add(-1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	select {
	case <-time.After(s.latency):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *slow) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	if err := s.wait(ctx); err != nil {
		return kv.KeyValue{}, err
	}
	return s.Backend.Get(ctx, key)
}

func (s *slow) List(ctx context.Context, prefix string, o kv.ListOptions) (kv.List, error) {
	if err := s.wait(ctx); err != nil {
		return kv.List{}, err
	}
	return s.Backend.List(ctx, prefix, o)
}

func (s *slow) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if err := s.wait(ctx); err != nil {
		return 0, err
	}
	return s.Backend.Txn(ctx, conds, w)
}

// A replica that takes many shards at once (a crashed replica's, on a store
// where each call takes 20ms) takes them in a few round trips, not one
// delete and one create after the other per shard: with 256 shards taken
// one by one, b would hold the last of a's 128 about 5s after the first.
func TestManyShardsAreTakenInAFewRoundTrips(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const S, latency = 256, 20 * time.Millisecond
		mem := &slow{Backend: memstore.New(), latency: latency}
		a, b := start(t, mem, "a", shard.WithShards(S)), start(t, mem, "b", shard.WithShards(S))
		settle(3*retry + 2*S*latency)
		split(t, S, a, b)
		a.b.cut.Store(true)
		cut := time.Now()
		for len(b.s.Status().Owned) < S && time.Since(cut) < 4*ttl {
			settle(10 * time.Millisecond)
		}
		took := time.Since(cut)
		a.b.cut.Store(false)
		a.stop()
		b.stop()
		// TTL plus two retries, as without latency, plus a listing, the
		// expired member's delete and one delete and create per shard,
		// all shards at once.
		require.LessOrEqual(t, took, ttl+2*retry+10*latency, "peak calls in flight: %d", mem.peak.Load())
		t.Logf("a's %d shards moved %v after the crash; peak calls in flight %d", S/2, took, mem.peak.Load())
	})
}

// nameIn returns a name whose shard is i among S.
func nameIn(i, S int) string {
	for n := 0; ; n++ {
		if name := fmt.Sprint("o", n); shard.Of(name, S) == i {
			return name
		}
	}
}

// A shard taken is held (Caches accepts its objects) but not owned (Enter
// refuses it) until Fill returns, so a cache filtered by Caches lists it
// before any reconcile reads it; then Gained is told. A shard let go is
// reported to Released, and Caches rejects its objects from then on.
func TestTakenShardsAreFilledBeforeTheyOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const S = 8
		mem := memstore.New()
		s, err := shard.New(mem, "loop", "a", shard.WithShards(S), shard.WithTTL(ttl), shard.WithRetryPeriod(retry))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		filling, fill := make(chan []int), make(chan struct{})
		var mu sync.Mutex
		var gained, released []int
		done := make(chan struct{})
		go func() {
			defer close(done)
			term, err := s.Join(ctx)
			if err != nil {
				return
			}
			s.Serve(term, shard.Hooks{
				Fill:     func(g []int) { filling <- g; <-fill },
				Gained:   func(g []int) { mu.Lock(); gained = append(gained, g...); mu.Unlock() },
				Released: func(r []int) { mu.Lock(); released = append(released, r...); mu.Unlock() },
			})
		}()
		g := <-filling
		require.Len(t, g, S)
		for _, i := range g {
			require.True(t, s.Caches(nameIn(i, S)), "shard %d's objects are cached while it fills", i)
			require.False(t, s.Owns(i))
			_, _, ok := s.Enter(i)
			require.False(t, ok, "no reconcile enters shard %d before it is filled", i)
		}
		require.Equal(t, g, s.Status().Moving)
		close(fill)
		synctest.Wait()
		mu.Lock()
		require.Equal(t, g, gained)
		mu.Unlock()
		st := s.Status()
		require.Equal(t, g, st.Owned)
		require.Empty(t, st.Moving)

		b := start(t, mem, "b", shard.WithShards(S))
		settle(3 * retry)
		moved := b.s.Status().Owned
		require.NotEmpty(t, moved)
		mu.Lock()
		require.Equal(t, moved, released, "a reports the shards it let go")
		mu.Unlock()
		for _, i := range moved {
			require.False(t, s.Caches(nameIn(i, S)), "a no longer caches shard %d", i)
		}
		cancel()
		<-done
		b.stop()
	})
}

// A replica on a store whose every call takes 900ms (under the renew
// interval, TTL/3 = 1s) stays a member and keeps its shards: the term is
// timed from when the call creating the member key began, and each renewal
// is due one renew interval after the last successful one began, as the
// 2/3-of-TTL deadline is timed, so a renewal has the whole interval to land.
// Timed from when the last one returned (or, for the first, from when Serve
// started, after Join's own calls), two slow calls in a row missed the
// deadline and the membership ended every few seconds, shards and all; timed
// from Join's Get, the first renewal landed at 2.7s, after the 2s deadline.
func TestSlowRenewalsKeepMembership(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const S, latency = 16, 900 * time.Millisecond
		mem := &slow{Backend: memstore.New(), latency: latency}
		s, err := shard.New(mem, "loop", "a", shard.WithShards(S), shard.WithTTL(ttl), shard.WithRetryPeriod(retry))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		term, err := s.Join(ctx)
		require.NoError(t, err)
		served := make(chan struct{})
		go func() { defer close(served); s.Serve(term, shard.Hooks{}) }()
		settle(10 * ttl)
		require.NoError(t, context.Cause(term), "the membership ended")
		require.Len(t, s.Status().Owned, S)
		cancel()
		<-served
	})
}
