package shard_test

// Black-box tests of the documented contract, written from the package
// documentation alone, with the misuse a client-go user brings in mind.

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
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// newSharder returns a Sharder on mem with the tests' TTL and retry period.
func newSharder(t *testing.T, mem kv.Backend, id string, S int) *shard.Sharder {
	t.Helper()
	s, err := shard.New(mem, "loop", id, shard.WithShards(S), shard.WithTTL(ttl), shard.WithRetryPeriod(retry))
	require.NoError(t, err)
	return s
}

// serve runs Serve(term) in a goroutine and returns a channel closed when
// it returns.
func serve(s *shard.Sharder, term context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() { defer close(done); s.Serve(term, shard.Hooks{}) }()
	return done
}

// serveAlone starts the only replica, "a", of S shards on mem, and returns
// it once it owns them all, with the cancel of its term's ctx and serve's
// channel.
func serveAlone(t *testing.T, mem kv.Backend, S int) (*shard.Sharder, context.CancelFunc, <-chan struct{}) {
	t.Helper()
	s := newSharder(t, mem, "a", S)
	ctx, cancel := context.WithCancel(context.Background())
	term, err := s.Join(ctx)
	require.NoError(t, err)
	done := serve(s, term)
	settle(2 * retry)
	require.Len(t, s.Status().Owned, S)
	return s, cancel, done
}

func returned(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// Serve serves the membership of Join's term. Called with no term (no Join
// before it, or a second time after its Serve returned), there is nothing
// to serve: it returns at once rather than blocking forever, and the
// Sharder can still Join and Serve.
func TestBlackbox49ServeWithoutATermReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New()
		s := newSharder(t, mem, "a", 4)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()

		done := serve(s, ctx)
		synctest.Wait()
		require.True(t, returned(done), "Serve before any Join returns")

		term, err := s.Join(ctx)
		require.NoError(t, err, "Join works after a Serve with no term")
		termCtx, end := context.WithCancel(term)
		done = serve(s, termCtx)
		settle(2 * retry)
		require.Len(t, s.Status().Owned, 4)
		end()
		<-done

		done = serve(s, ctx)
		synctest.Wait()
		require.True(t, returned(done), "a second Serve of a term already served returns")

		joined := make(chan error, 1)
		go func() {
			term, err := s.Join(ctx)
			if err == nil {
				done := serve(s, term)
				cancel()
				<-done
			}
			joined <- err
		}()
		synctest.Wait()
		require.NoError(t, <-joined, "Join works after a second Serve")
	})
}

// Join with a ctx already cancelled returns ctx's error and no term, and
// the Sharder is not left half-joined: a later Join succeeds.
func TestBlackbox49JoinWithACancelledContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New()
		s := newSharder(t, mem, "a", 4)
		dead, cancel := context.WithCancel(context.Background())
		cancel()
		for range 3 {
			term, err := s.Join(dead)
			require.ErrorIs(t, err, context.Canceled)
			require.Nil(t, term)
		}
		require.False(t, s.Status().Member)

		ctx, stop := context.WithCancel(context.Background())
		term, err := s.Join(ctx)
		require.NoError(t, err)
		done := serve(s, term)
		settle(2 * retry)
		require.True(t, s.Status().Member)
		stop()
		<-done
		require.False(t, s.Status().Member, "a replica whose term ended is no member")
	})
}

// Owns, Enter, Exit and Fence take any int: a shard index out of [0, S)
// is a shard this replica does not own (Owns false, Enter not ok, Exit
// nothing), and its Fence never holds, so a write made with it is refused.
func TestBlackbox49ShardIndexesOutOfRange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const S = 4
		mem := memstore.New()
		s, cancel, done := serveAlone(t, mem, S)

		for _, i := range []int{-1, S, S + 1, 1 << 40, -1 << 40} {
			require.False(t, s.Owns(i), "Owns(%d)", i)
			lost, _, ok := s.Enter(i)
			require.False(t, ok, "Enter(%d)", i)
			require.Nil(t, lost)
			s.Exit(i)
			f := s.Fence(i)
			_, err := mem.Txn(context.Background(), []kv.Cond{{Key: f.Key, Target: kv.CreateRevision, Revision: f.Revision}},
				kv.Write{Kind: kv.WritePut, Key: "kind/x", Value: []byte("{}")})
			require.ErrorIs(t, err, kv.ErrCondFailed, "a write with Fence(%d) is refused", i)
		}
		cancel()
		<-done
	})
}

// "A shard is released only after every Enter has been matched by an
// Exit": an Exit with no Enter to match (a caller's double Exit) does not
// count against a later Enter, so the shard still waits for that reconcile
// before it moves.
func TestBlackbox49UnmatchedExitDoesNotReleaseARunningReconcile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const S = 16
		mem := memstore.New()
		a := start(t, mem, "a", shard.WithShards(S))
		settle(2 * retry)
		moving := -1
		for i, o := range shard.Rebalance([]string{"a", "b"}, slices.Repeat([]string{"a"}, S)) {
			if o == "b" {
				moving = i
				break
			}
		}
		require.GreaterOrEqual(t, moving, 0)
		_, _, ok := a.s.Enter(moving)
		require.True(t, ok)
		a.s.Exit(moving)
		a.s.Exit(moving) // unmatched
		a.s.Exit(moving) // unmatched
		lost, _, ok := a.s.Enter(moving)
		require.True(t, ok)

		b := start(t, mem, "b", shard.WithShards(S))
		settle(3 * retry)
		require.ErrorIs(t, context.Cause(lost), shard.ErrMoved)
		require.NotContains(t, b.s.Status().Owned, moving, "b waits while a's reconcile runs")

		a.s.Exit(moving)
		settle(2 * retry)
		require.Contains(t, b.s.Status().Owned, moving, "the shard moves once the reconcile returned")
		a.stop()
		b.stop()
	})
}

// Status returns the replica's view: the caller may change what it got
// without changing the next Status.
func TestBlackbox49StatusIsACopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const S = 4
		mem := memstore.New()
		a, b := start(t, mem, "a", shard.WithShards(S)), start(t, mem, "b", shard.WithShards(S))
		settle(3 * retry)
		st := a.s.Status()
		want := st
		want.Members, want.Owned, want.Moving = slices.Clone(st.Members), slices.Clone(st.Owned), slices.Clone(st.Moving)
		require.NotEmpty(t, st.Owned)
		st.Owned[0] = -7
		st.Members[0] = "mallory"
		st.Owned = append(st.Owned[:0], 99, 98, 97)
		require.Equal(t, want, a.s.Status())
		a.stop()
		b.stop()
	})
}

// Identities and names may be any non-empty text without "/": replicas
// named in scripts other than Latin, with spaces, or differing only in
// case split the shards like any others, and Caches agrees with Owns for
// objects of any name, the empty one included.
func TestBlackbox49UnicodeIdentitiesSplitShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const S = 32
		mem := memstore.New()
		ids := []string{"Ä", "ä", "日本 1", "pod\tβ"}
		var rs []*replica
		for _, id := range ids {
			rs = append(rs, start(t, mem, id, shard.WithShards(S)))
		}
		settle(4 * retry)
		split(t, S, rs...)
		for _, r := range rs {
			require.Equal(t, slices.Sorted(slices.Values(ids)), r.s.Status().Members)
			for _, name := range []string{"", "ü/ß", "\x00", string(make([]byte, 1<<16))} {
				require.Equal(t, r.s.Owns(r.s.Of(name)), r.s.Caches(name), "%s caches %q", r.s.Identity(), name)
			}
		}
		for _, r := range rs {
			r.stop()
		}
	})
}

// Rebalance computes owners "among members": the empty name, which as a
// holder means nobody, is no member, so every shard is still owned by a
// named member, each within one shard of its share.
func TestBlackbox49RebalanceIgnoresAnEmptyMember(t *testing.T) {
	const S = 10
	for _, members := range [][]string{{"", "a"}, {"a", "", "b", ""}} {
		named := slices.DeleteFunc(slices.Clone(members), func(m string) bool { return m == "" })
		want := shard.Assign(named, S)
		require.Equal(t, want, shard.Assign(members, S), "%q", members)
		require.Equal(t, want, shard.Rebalance(members, make([]string, S)), "%q", members)
		require.NotContains(t, shard.Assign(members, S), "")
	}
	require.Equal(t, make([]string, S), shard.Assign([]string{""}, S), "no named member: nobody owns a shard")
}

// When term ends Serve "releases every shard and then the membership":
// once it returned, the replica holds nothing. Caches rejects every
// object, Owns and Enter refuse every shard, every Fence fails, and
// Status shows no member and no shards.
func TestBlackbox49NothingIsHeldAfterServeReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const S = 8
		mem := memstore.New()
		s, cancel, done := serveAlone(t, mem, S)
		held := s.Fence(0)
		cancel()
		<-done

		for i := range S {
			require.False(t, s.Caches(nameIn(i, S)), "shard %d's objects", i)
			require.False(t, s.Owns(i))
			_, _, ok := s.Enter(i)
			require.False(t, ok)
			require.NotEqual(t, held, s.Fence(i))
		}
		_, err := mem.Txn(context.Background(), []kv.Cond{{Key: held.Key, Target: kv.CreateRevision, Revision: held.Revision}},
			kv.Write{Kind: kv.WritePut, Key: "kind/late", Value: []byte("{}")})
		require.ErrorIs(t, err, kv.ErrCondFailed, "a write with the fence the replica held is refused")
		st := s.Status()
		require.False(t, st.Member)
		require.Empty(t, st.Owned)
		require.Empty(t, st.Moving)
	})
}

// "No key is reconciled by two replicas at once unless a reconcile
// outlives its replica's lease": workers of three replicas Enter every
// shard over and over, each reconcile short, while replicas join, leave
// and rejoin; no shard ever has reconciles of two replicas running, and
// every shard is worked on throughout by somebody once the fleet settled.
func TestBlackbox49NoShardIsWorkedByTwoReplicasAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const S, workers = 16, 4
		mem := memstore.New()
		var mu sync.Mutex
		inside := make([]map[string]int, S) // shard → replica → reconciles running
		for i := range inside {
			inside[i] = map[string]int{}
		}
		var overlaps []string
		stop := make(chan struct{})
		var wg sync.WaitGroup
		work := func(r *replica) {
			for w := range workers {
				wg.Go(func() {
					for n := 0; ; n++ {
						select {
						case <-stop:
							return
						default:
						}
						i := (n*workers + w) % S
						if _, _, ok := r.s.Enter(i); ok {
							id := r.s.Identity()
							mu.Lock()
							inside[i][id]++
							if len(inside[i]) > 1 {
								overlaps = append(overlaps, fmt.Sprintf("shard %d at %v: %v", i, time.Now(), inside[i]))
							}
							mu.Unlock()
							time.Sleep(30 * time.Millisecond) // the reconcile
							mu.Lock()
							if inside[i][id]--; inside[i][id] == 0 {
								delete(inside[i], id)
							}
							mu.Unlock()
							r.s.Exit(i)
						}
						time.Sleep(7 * time.Millisecond)
					}
				})
			}
		}
		a, b := start(t, mem, "a", shard.WithShards(S)), start(t, mem, "b", shard.WithShards(S))
		work(a)
		work(b)
		settle(3 * retry)
		c := start(t, mem, "c", shard.WithShards(S))
		work(c)
		settle(4 * retry)
		split(t, S, a, b, c)
		b.stop()
		settle(4 * retry)
		split(t, S, a, c)
		b = start(t, mem, "b", shard.WithShards(S))
		work(b)
		settle(4 * retry)
		split(t, S, a, b, c)
		close(stop)
		wg.Wait()
		a.stop()
		b.stop()
		c.stop()
		require.Empty(t, overlaps)
	})
}

// Join's term ends "when the membership is lost (cause wrapping ErrLost)":
// a member key deleted behind the replica's back (an operator's cleanup, a
// restore of the store) fails the next renewal, the term ends with ErrLost
// and no shard stays open; the next Join succeeds and the replica works
// again.
func TestBlackbox49ATakenMemberKeyEndsTheTermWithErrLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const S = 4
		mem := memstore.New()
		s := newSharder(t, mem, "a", S)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		term, err := s.Join(ctx)
		require.NoError(t, err)
		done := serve(s, term)
		settle(2 * retry)
		require.Len(t, s.Status().Owned, S)
		lost, _, ok := s.Enter(0)
		require.True(t, ok)
		s.Exit(0)

		_, err = mem.Txn(context.Background(), nil, kv.Write{Kind: kv.WriteDelete, Key: "_shards/loop/members/a"})
		require.NoError(t, err)
		settle(ttl/3 + 100*time.Millisecond) // the next renewal, well before 2/3 of the TTL
		require.True(t, returned(done), "the next renewal ends the term")
		require.ErrorIs(t, context.Cause(term), shard.ErrLost)
		require.NoError(t, ctx.Err(), "the term ended, not its ctx")
		require.ErrorIs(t, context.Cause(lost), shard.ErrMoved, "the shards' contexts end too")
		require.Empty(t, s.Status().Owned)

		term, err = s.Join(ctx)
		require.NoError(t, err, "the next Join succeeds")
		done = serve(s, term)
		settle(2 * retry)
		require.Len(t, s.Status().Owned, S)
		cancel()
		<-done
	})
}
