package lease_test

// Black-box tests of StoreElector, written from its documentation alone:
// each test quotes the promise it checks.

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/lease"
	"github.com/steady-go/steady/store/memstore"
)

// "It returns an error for a nil backend (a typed nil ... included; it wraps
// store.ErrInvalid), an empty key or identity, or invalid options." Each
// option names its own bound; a nil Option is a user's conditional option
// left out, and an odd (unicode, very long) key or identity is still a key.
func TestBlackbox51NewChecksEveryArgument(t *testing.T) {
	b := memstore.New()
	_, err := lease.New(nil, "_k", "a")
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = lease.New((*memstore.Store)(nil), "_k", "a")
	require.ErrorIs(t, err, store.ErrInvalid)

	for name, opts := range map[string][]lease.Option{
		"negative TTL":            {lease.WithTTL(-time.Second)},
		"zero renew":              {lease.WithRenewInterval(0)},
		"renew at exactly 2/3":    {lease.WithTTL(3 * time.Second), lease.WithRenewInterval(2 * time.Second)},
		"renew above the TTL":     {lease.WithRenewInterval(time.Hour)},
		"negative retry":          {lease.WithRetryPeriod(-time.Nanosecond)},
		"renew set before a TTL":  {lease.WithRenewInterval(5 * time.Second), lease.WithTTL(6 * time.Second)},
		"TTL too short to renew ": {lease.WithTTL(2)}, // TTL/3 rounds to 0
	} {
		_, err := lease.New(b, "_k", "a", opts...)
		assert.Error(t, err, name)
	}

	for name, opts := range map[string][]lease.Option{
		"no options":              nil,
		"a nil option":            {nil},
		"renew just below 2/3":    {lease.WithTTL(3 * time.Second), lease.WithRenewInterval(2*time.Second - 1)},
		"WithoutRelease twice":    {lease.WithoutRelease(), lease.WithoutRelease()},
		"later TTL overrides one": {lease.WithTTL(-1), lease.WithTTL(time.Second)},
	} {
		_, err := lease.New(b, "_k", "a", opts...)
		assert.NoError(t, err, name)
	}

	e, err := lease.New(b, "_leases/ключ/🔑", "pod-ü\x00", lease.WithTTL(time.Second))
	require.NoError(t, err)
	require.Equal(t, "pod-ü\x00", e.Identity(), "Identity returns the identity the elector campaigns as")
}

// "Holder returns the identity recorded in the leader key, or an error
// wrapping store.ErrNotFound when nobody holds it."; "When the ctx given to
// Campaign ends, the key is deleted"; "Wait blocks until every term this
// elector began has ended and, for a term whose campaign ctx ended, released
// the leader key".
func TestBlackbox51HolderNamesTheLeaderAndWaitSeesTheRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memstore.New()
		e, err := lease.New(b, "_leases/c", "pod-1")
		require.NoError(t, err)
		e.Wait() // no term begun: returns at once

		_, err = e.Holder(t.Context())
		require.ErrorIs(t, err, store.ErrNotFound)

		ctx, resign := context.WithCancelCause(t.Context())
		term, fence, err := e.Campaign(ctx)
		require.NoError(t, err)
		require.Positive(t, fence.Revision)
		require.Equal(t, "_leases/c", fence.Key)
		h, err := e.Holder(t.Context())
		require.NoError(t, err)
		require.Equal(t, "pod-1", h)

		why := errors.New("rolling update")
		resign(why)
		<-term.Done()
		require.Same(t, why, context.Cause(term), "the term context ends with cause context.Cause(ctx)")
		e.Wait()
		_, err = e.Holder(t.Context())
		require.ErrorIs(t, err, store.ErrNotFound, "after Wait the released key is gone")
		e.Wait() // again: nothing to wait for
	})
}

// "Campaign blocks until the caller leads, or until ctx ends (then it
// returns ctx's error)": a ctx already over returns at once, its error, no
// term, and leaves no leader key behind.
func TestBlackbox51CampaignWithAnEndedCtxTakesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memstore.New()
		e, err := lease.New(b, "_leases/c", "pod-1")
		require.NoError(t, err)
		for range 20 {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			term, fence, err := e.Campaign(ctx)
			require.ErrorIs(t, err, context.Canceled)
			require.Nil(t, term)
			require.Zero(t, fence)
			e.Wait()
			_, err = e.Holder(t.Context())
			require.ErrorIs(t, err, store.ErrNotFound)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		time.Sleep(2 * time.Second)
		_, _, err = e.Campaign(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

// "Backend errors while waiting are retried every retry period; Campaign
// returns only ctx's error." A backend that fails every call makes Campaign
// wait (not spin: a call per retry period) until ctx ends.
func TestBlackbox51CampaignRetriesBackendErrorsAtTheRetryPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fb := &failing{Backend: memstore.New()}
		fb.fail.Store(true)
		e, err := lease.New(fb, "_leases/c", "pod-1", lease.WithRetryPeriod(time.Second))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second+time.Millisecond)
		defer cancel()
		_, _, err = e.Campaign(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.False(t, errors.Is(err, kv.ErrUnavailable), "only ctx's error is returned")
		require.InDelta(t, 11, int(fb.calls.Load()), 1, "one read per retry period over 10s")
	})
}

// "A candidate takes over a leader key that has not changed for the TTL
// recorded in it; the leader itself stops at 2/3 of it", "so a leader stops
// its work before any other candidate may consider the lease expired." With
// a TTL that is not a whole number of milliseconds, the leader whose renewals
// hang must still have stopped when the other candidate wins.
func TestBlackbox51LeaderStopsBeforeTakeoverWithAnyTTL(t *testing.T) {
	for _, ttl := range []time.Duration{
		1900 * time.Microsecond, 900 * time.Microsecond, 30 * time.Millisecond, 15 * time.Second,
	} {
		t.Run(ttl.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem := memstore.New()
				pa := &partition{Backend: mem}
				retry := lease.WithRetryPeriod(ttl / 50)
				a, err := lease.New(pa, "_l", "a", lease.WithTTL(ttl), retry)
				require.NoError(t, err)
				b, err := lease.New(mem, "_l", "b", lease.WithTTL(ttl), retry)
				require.NoError(t, err)

				ctxA, stopA := context.WithCancel(t.Context())
				termA, _, err := a.Campaign(ctxA)
				require.NoError(t, err)
				pa.cut.Store(true) // a's renewals hang from now on

				ctxB, stopB := context.WithCancel(t.Context())
				termB, _, err := b.Campaign(ctxB)
				require.NoError(t, err)
				select {
				case <-termA.Done():
					require.ErrorIs(t, context.Cause(termA), lease.ErrLost)
				default:
					t.Errorf("b leads while a's term (TTL %v) is still on", ttl)
				}
				_, err = b.Holder(t.Context())
				require.NoError(t, err)
				stopB()
				<-termB.Done()
				stopA()
				a.Wait()
				b.Wait()
			})
		})
	}
}

// "A StoreElector runs one term at a time: Campaign waits for the previous
// term, including its release, to finish. It is safe for concurrent use, but
// concurrent Campaign calls on one StoreElector take turns."
func TestBlackbox51ConcurrentCampaignsTakeTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, err := lease.New(memstore.New(), "_l", "a")
		require.NoError(t, err)
		var (
			mu      sync.Mutex
			leading int
			wg      sync.WaitGroup
		)
		for range 8 {
			wg.Go(func() {
				ctx, resign := context.WithCancel(t.Context())
				defer resign()
				term, _, err := e.Campaign(ctx)
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				leading++
				assert.Equal(t, 1, leading, "two terms of one elector at once")
				mu.Unlock()
				time.Sleep(time.Second)
				mu.Lock()
				leading--
				mu.Unlock()
				resign()
				<-term.Done()
			})
		}
		wg.Wait()
		e.Wait()
	})
}

// "Campaign may be called again after a term ends." and, with
// WithoutRelease, "the next leader waits for the TTL instead of taking over
// at once" — but a key naming this elector is its own: it takes it again.
func TestBlackbox51WithoutReleaseKeepsTheKeyForTheTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New()
		a, err := lease.New(mem, "_l", "a", lease.WithoutRelease())
		require.NoError(t, err)
		b, err := lease.New(mem, "_l", "b", lease.WithRetryPeriod(100*time.Millisecond))
		require.NoError(t, err)

		ctx, resign := context.WithCancel(t.Context())
		term, f1, err := a.Campaign(ctx)
		require.NoError(t, err)
		resign()
		<-term.Done()
		a.Wait()
		h, err := a.Holder(t.Context())
		require.NoError(t, err)
		require.Equal(t, "a", h, "WithoutRelease keeps the leader key")

		start := time.Now()
		ctxB, resignB := context.WithCancel(t.Context())
		termB, f2, err := b.Campaign(ctxB)
		require.NoError(t, err)
		require.GreaterOrEqual(t, time.Since(start), lease.DefaultTTL, "b waited out the TTL")
		require.Greater(t, f2.Revision, f1.Revision, "a new term has a new fence")
		resignB()
		<-termB.Done()
		b.Wait()
	})
}

// "Holder returns the identity recorded in the leader key": a key holding
// something that is not a lease record (a user's own value at that key) must
// neither panic nor block a Campaign forever; the candidate takes it over
// after its own TTL.
func TestBlackbox51ForeignValueAtTheLeaderKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New()
		for _, v := range [][]byte{nil, []byte("not json"), []byte(`{"holder":"x","ttlMillis":-5}`), []byte(`null`)} {
			_, err := mem.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: "_l", Value: v})
			require.NoError(t, err)
			e, err := lease.New(mem, "_l", "a", lease.WithTTL(3*time.Second), lease.WithRetryPeriod(time.Second))
			require.NoError(t, err)
			_, err = e.Holder(t.Context())
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			term, _, err := e.Campaign(ctx)
			require.NoError(t, err, "value %q", v)
			cancel()
			<-term.Done()
			e.Wait()
		}
	})
}

// failing is a backend whose every call fails with ErrUnavailable while
// fail is set, counting the calls.
type failing struct {
	kv.Backend
	fail  atomic.Bool
	calls atomic.Int64
}

func (f *failing) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	f.calls.Add(1)
	if f.fail.Load() {
		return kv.KeyValue{}, kv.ErrUnavailable
	}
	return f.Backend.Get(ctx, key)
}

func (f *failing) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	f.calls.Add(1)
	if f.fail.Load() {
		return 0, kv.ErrUnavailable
	}
	return f.Backend.Txn(ctx, conds, w)
}

// WithTTL: "It must be positive." Any positive TTL, however long (a user's
// "never expire"), is one: New accepts it, and a candidate waiting behind a
// holder of it does not take over, rather than finding the TTL overflowed.
func TestBlackbox51HugeTTLIsAccepted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New()
		huge := lease.WithTTL(time.Duration(math.MaxInt64))
		a, err := lease.New(mem, "_l", "a", huge, lease.WithoutRelease())
		require.NoError(t, err)
		b, err := lease.New(mem, "_l", "b", huge, lease.WithRetryPeriod(time.Minute))
		require.NoError(t, err)

		ctx, resign := context.WithCancel(t.Context())
		term, _, err := a.Campaign(ctx)
		require.NoError(t, err)
		resign()
		<-term.Done()
		a.Wait()

		ctxB, cancelB := context.WithTimeout(t.Context(), 24*time.Hour)
		defer cancelB()
		_, _, err = b.Campaign(ctxB)
		require.ErrorIs(t, err, context.DeadlineExceeded, "b waits for a TTL of 292 years")
	})
}

// "It is safe for concurrent use": Wait, Holder and Identity may be called
// while terms begin and end, and Wait returns once the terms it saw are over.
func TestBlackbox51WaitConcurrentWithCampaigns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, err := lease.New(memstore.New(), "_l", "a")
		require.NoError(t, err)
		var wg sync.WaitGroup
		done := make(chan struct{})
		wg.Go(func() {
			defer close(done)
			for range 50 {
				ctx, resign := context.WithCancel(t.Context())
				term, _, err := e.Campaign(ctx)
				if !assert.NoError(t, err) {
					resign()
					return
				}
				time.Sleep(time.Millisecond)
				resign()
				<-term.Done()
			}
		})
		for range 3 {
			wg.Go(func() {
				for {
					select {
					case <-done:
						return
					default:
					}
					e.Wait()
					_, _ = e.Holder(t.Context())
					_ = e.Identity()
					time.Sleep(time.Millisecond / 3)
				}
			})
		}
		wg.Wait()
		e.Wait()
		_, err = e.Holder(t.Context())
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}
