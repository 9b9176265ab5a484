package lease_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/lease"
	"github.com/steady-go/steady/store/memstore"
)

const ttl = 15 * time.Second // renew every 5s, stop at 10s, take over after 15s

func newElector(t *testing.T, b kv.Backend, id string, opts ...lease.Option) *lease.StoreElector {
	t.Helper()
	e, err := lease.New(b, "leader", id, append([]lease.Option{lease.WithTTL(ttl)}, opts...)...)
	require.NoError(t, err)
	return e
}

// brokenClock is a clock whose nil pointer panics when read.
type brokenClock struct{ clock.Real }

func TestNewRejectsBadArguments(t *testing.T) {
	b := memstore.New()
	for _, tc := range []struct {
		name     string
		b        kv.Backend
		key, id  string
		opts     []lease.Option
		contains string
	}{
		{"nil backend", nil, "k", "a", nil, "backend"},
		{"empty key", b, "", "a", nil, "key"},
		{"empty identity", b, "k", "", nil, "identity"},
		{"zero TTL", b, "k", "a", []lease.Option{lease.WithTTL(0)}, "TTL"},
		{"renew too slow", b, "k", "a", []lease.Option{lease.WithRenewInterval(10 * time.Second)}, "2/3"},
		{"negative renew", b, "k", "a", []lease.Option{lease.WithRenewInterval(-1)}, "renew"},
		{"zero retry", b, "k", "a", []lease.Option{lease.WithRetryPeriod(0)}, "retry"},
		{"nil clock", b, "k", "a", []lease.Option{lease.WithClock(nil)}, "clock"},
		{"typed nil backend", (*memstore.Store)(nil), "k", "a", nil, "backend"},
		{"typed nil clock", b, "k", "a", []lease.Option{lease.WithClock((*brokenClock)(nil))}, "clock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lease.New(tc.b, tc.key, tc.id, tc.opts...)
			require.ErrorContains(t, err, tc.contains)
		})
	}
}

func TestCampaignAcquiresAFreeKeyAndFencesWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memstore.New()
		e := newElector(t, b, "a")
		ctx, cancel := context.WithCancel(t.Context())
		term, fence, err := e.Campaign(ctx)
		require.NoError(t, err)

		kvp, err := b.Get(t.Context(), "leader")
		require.NoError(t, err)
		require.Equal(t, store.Fence{Key: "leader", Revision: kvp.CreateRevision}, fence,
			"the fence is the leader key's CreateRevision")
		inCtx, ok := store.FenceFrom(term)
		require.True(t, ok, "the term context carries the fence")
		require.Equal(t, fence, inCtx)
		holder, err := e.Holder(t.Context())
		require.NoError(t, err)
		require.Equal(t, "a", holder)

		// A minute of renewals: the key is rewritten, the fence still holds.
		time.Sleep(time.Minute)
		require.NoError(t, term.Err(), "renewals keep the term alive")
		kv2, err := b.Get(t.Context(), "leader")
		require.NoError(t, err)
		require.Greater(t, kv2.ModRevision, kvp.ModRevision, "renewals rewrote the key")
		require.Equal(t, kvp.CreateRevision, kv2.CreateRevision)
		_, err = fencedWrite(t.Context(), b, fence, "work", "x")
		require.NoError(t, err)

		// Resigning ends the term with ctx's cause and releases the key.
		cancel()
		<-term.Done()
		require.ErrorIs(t, context.Cause(term), context.Canceled)
		synctest.Wait()
		_, err = b.Get(t.Context(), "leader")
		require.ErrorIs(t, err, store.ErrNotFound, "the key is released")
		_, err = fencedWrite(t.Context(), b, fence, "work", "y")
		require.ErrorIs(t, err, kv.ErrCondFailed, "a released term's fence no longer holds")
	})
}

func TestTakeoverAfterExpiryRejectsTheStaleFence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New()
		pa := &partition{Backend: mem}
		a, b := newElector(t, pa, "a"), newElector(t, mem, "b")
		start := time.Now()
		termA, fenceA, err := a.Campaign(t.Context())
		require.NoError(t, err)

		type won struct {
			term  context.Context
			fence store.Fence
			at    time.Duration
		}
		bWon := make(chan won, 1)
		go func() {
			term, fence, err := b.Campaign(t.Context())
			require.NoError(t, err)
			bWon <- won{term, fence, time.Since(start)}
		}()

		pa.cut.Store(true) // a can no longer renew
		<-termA.Done()
		require.Equal(t, 10*time.Second, time.Since(start), "a stops at 2/3 of the TTL")
		require.ErrorIs(t, context.Cause(termA), lease.ErrLost)

		wb := <-bWon
		require.GreaterOrEqual(t, wb.at, ttl, "b waits out the full TTL after a's last renewal")
		require.Less(t, wb.at, ttl+lease.DefaultRetryPeriod+time.Second, "and takes over at its next look")
		require.NotEqual(t, fenceA.Revision, wb.fence.Revision)

		_, err = fencedWrite(t.Context(), mem, fenceA, "work", "from a")
		var cf *kv.CondFailedError
		require.ErrorAs(t, err, &cf, "the store rejects the deposed leader's write")
		require.Equal(t, kv.Cond{Key: fenceA.Key, Target: kv.CreateRevision, Revision: fenceA.Revision}, cf.Cond)
		_, err = fencedWrite(t.Context(), mem, wb.fence, "work", "from b")
		require.NoError(t, err)
		pa.cut.Store(false)
	})
}

func TestTermEndsAtTwoThirdsTTLWhenRenewalBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pa := &partition{Backend: memstore.New()}
		e := newElector(t, pa, "a")
		start := time.Now()
		term, _, err := e.Campaign(t.Context())
		require.NoError(t, err)

		time.Sleep(7 * time.Second) // the renewal at 5s succeeded
		pa.cut.Store(true)          // the renewal at 10s hangs
		<-term.Done()
		require.Equal(t, 15*time.Second, time.Since(start), "2/3 TTL after the renewal that started at 5s")
		require.ErrorIs(t, context.Cause(term), lease.ErrLost)
		require.ErrorContains(t, context.Cause(term), "2/3")
		synctest.Wait() // the hung renewal was cancelled: no goroutine is left behind
	})
}

// slowTxn delays every Txn by latency, as a loaded store does.
type slowTxn struct {
	kv.Backend
	latency time.Duration
}

func (s slowTxn) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	time.Sleep(s.latency)
	return s.Backend.Txn(ctx, conds, w)
}

// A leader whose every write takes 3s (under the renew interval, 5s) keeps
// its term: each renewal is due 5s after the last successful one began, so
// it lands by 8s, within the 10s deadline. Timed from when the last call
// returned, the first renewal began at 8s and landed at 11s, too late.
func TestSlowRenewalsKeepTheTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newElector(t, slowTxn{Backend: memstore.New(), latency: 3 * time.Second}, "a")
		ctx, cancel := context.WithCancel(t.Context())
		term, _, err := e.Campaign(ctx)
		require.NoError(t, err)
		time.Sleep(10 * ttl)
		require.NoError(t, context.Cause(term), "the term ended")
		cancel()
		<-term.Done()
		time.Sleep(ttl) // the release's slow delete
		synctest.Wait()
	})
}

func TestTermEndsWhenTheKeyIsTakenAway(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New()
		e := newElector(t, mem, "a")
		term, _, err := e.Campaign(t.Context())
		require.NoError(t, err)
		// An operator deletes the key by hand.
		_, err = mem.Txn(t.Context(), nil, kv.Write{Kind: kv.WriteDelete, Key: "leader"})
		require.NoError(t, err)
		start := time.Now()
		<-term.Done()
		require.Equal(t, 5*time.Second, time.Since(start), "the next renewal finds the key gone")
		require.ErrorIs(t, context.Cause(term), lease.ErrLost)
		require.ErrorContains(t, context.Cause(term), "taken over")
	})
}

func TestReleaseLetsTheNextCandidateInAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []lease.Option
		wait time.Duration // longest time b may need after a resigns
	}{
		{"released", nil, lease.DefaultRetryPeriod},
		// b must see the key unchanged for a whole TTL, checking once per
		// retry period: it may first see a's last renewal up to one period
		// late, and then take over up to one period after the TTL has run.
		{"WithoutRelease", []lease.Option{lease.WithoutRelease()}, ttl + 2*lease.DefaultRetryPeriod},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem := memstore.New()
				a, b := newElector(t, mem, "a", tc.opts...), newElector(t, mem, "b")
				ctxA, resign := context.WithCancel(t.Context())
				termA, _, err := a.Campaign(ctxA)
				require.NoError(t, err)
				bWon := make(chan time.Time, 1)
				go func() {
					_, _, err := b.Campaign(t.Context())
					require.NoError(t, err)
					bWon <- time.Now()
				}()
				time.Sleep(time.Minute)
				resign()
				<-termA.Done()
				resigned := time.Now()
				took := (<-bWon).Sub(resigned)
				require.LessOrEqual(t, took, tc.wait)
				if tc.opts != nil {
					require.Greater(t, took, lease.DefaultRetryPeriod, "without release b waits for expiry")
				}
			})
		})
	}
}

func TestCampaignEndsWithCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New()
		a, b := newElector(t, mem, "a"), newElector(t, mem, "b")
		_, _, err := a.Campaign(t.Context())
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		_, _, err = b.Campaign(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded, "a keeps renewing, b never leads")
	})
}

func TestCampaignAgainAfterATermEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pa := &partition{Backend: memstore.New()}
		e := newElector(t, pa, "a")
		term1, f1, err := e.Campaign(t.Context())
		require.NoError(t, err)
		pa.cut.Store(true)
		<-term1.Done()
		pa.cut.Store(false)
		// The stale key names us: the next Campaign takes it back at once,
		// with a new fence.
		start := time.Now()
		term2, f2, err := e.Campaign(t.Context())
		require.NoError(t, err)
		require.Zero(t, time.Since(start))
		require.NoError(t, term2.Err())
		require.NotEqual(t, f1, f2)
	})
}

// Several candidates, each sometimes partitioned away or resigning, over a
// long virtual run: no two terms ever overlap in time, and the store accepts
// a fenced write only if no other term began between the writer's
// acquisition and the write, including "zombie" writes a deposed leader
// makes after its term ended.
//
// Terms are put in the order of their fences, not of their start times. The
// fence is the revision at which the store created the leader key, so fences
// are totally ordered and that order is the order in which the store let the
// terms begin: the order every fenced write is judged by. Start times are
// virtual instants and tie: a candidate that resigns at the instant it wins
// releases the key at that instant, and a waiting candidate can win at that
// instant too. Sorting by start time alone then put the later term first and
// reported an overlap (and a write "after the next term began") that did not
// happen.
func TestOnlyOneLeaderAtATime(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { oneLeaderRun(t, seed) })
		})
	}
}

type term struct {
	id         int
	start, end time.Time
	fence      int64   // acquisition revision
	writes     []int64 // revisions of accepted fenced writes
	zombie     bool    // the write made after the term ended was accepted
	zombieTry  bool
}

func oneLeaderRun(t *testing.T, seed uint64) {
	mem := memstore.New()
	const candidates = 4
	terms := make(chan term, 1000)
	ctx, stop := context.WithTimeout(t.Context(), 30*time.Minute)
	defer stop()
	done := make(chan struct{})
	for i := range candidates {
		pa := &partition{Backend: mem}
		e := newElector(t, pa, string(rune('a'+i)))
		rnd := rand.New(rand.NewPCG(seed, uint64(i)))
		go func() {
			defer func() { done <- struct{}{} }()
			for ctx.Err() == nil {
				cctx, resign := context.WithCancel(ctx)
				tc, fence, err := e.Campaign(cctx)
				if err != nil {
					resign()
					return
				}
				tm := term{id: i, start: time.Now(), fence: fence.Revision}
				// Work: a fenced write every second until the term ends.
				// Sometimes we resign, sometimes the network fails.
				trouble := time.After(time.Duration(rnd.IntN(40)) * time.Second)
			work:
				for {
					select {
					case <-tc.Done():
						break work
					case <-trouble:
						if rnd.IntN(2) == 0 {
							resign()
						} else {
							pa.cut.Store(true)
						}
					case <-time.After(time.Second):
						if rev, err := fencedWrite(tc, mem, fence, "work", "w"); err == nil {
							tm.writes = append(tm.writes, rev)
						}
					}
				}
				tm.end = time.Now()
				resign()
				// A zombie: after a pause, write with the old fence anyway.
				time.Sleep(time.Duration(rnd.IntN(30)) * time.Second)
				if rnd.IntN(2) == 0 {
					tm.zombieTry = true
					if rev, err := fencedWrite(context.Background(), mem, fence, "work", "zombie"); err == nil {
						tm.zombie = true
						tm.writes = append(tm.writes, rev)
					} else {
						assert.ErrorIs(t, err, kv.ErrCondFailed) // not require: this is not the test's goroutine
					}
				}
				terms <- tm
				pa.cut.Store(false)
			}
		}()
	}
	for range candidates {
		<-done
	}
	// An elector releases the key after its term ended, on a detached context
	// bounded by a few seconds; through a cut partition that release hangs
	// until the bound. Virtual time stops when this goroutine returns (or a
	// require below fails), so a release still waiting then would never end
	// and synctest would panic with "deadlock: main bubble goroutine has
	// exited but blocked goroutines remain", hiding any real failure. Wait
	// them out: they are bounded well within a TTL.
	time.Sleep(ttl)
	close(terms)
	var all []term
	for tm := range terms {
		all = append(all, tm)
	}
	require.Greater(t, len(all), 10, "leadership changed hands many times")
	slices.SortFunc(all, func(a, b term) int { return cmp.Compare(a.fence, b.fence) })
	rejected := 0
	for i, tm := range all {
		if i > 0 {
			prev := all[i-1]
			require.Less(t, prev.fence, tm.fence, "every term has its own fence")
			require.False(t, tm.start.Before(prev.end),
				"term of %c (fence %d) starting at %v overlaps the previous term, of %c (fence %d), ending at %v",
				'a'+tm.id, tm.fence, tm.start, 'a'+prev.id, prev.fence, prev.end)
		}
		next := int64(1 << 62)
		if i+1 < len(all) {
			next = all[i+1].fence
		}
		for _, w := range tm.writes {
			require.True(t, tm.fence < w && w < next,
				"write at %d under fence %d accepted after the next term began at %d", w, tm.fence, next)
		}
		if tm.zombieTry && !tm.zombie {
			rejected++
		}
	}
	require.Positive(t, rejected, "some zombie writes were fenced off")
}

// slowRelease delays every delete by a second, as a slow store does.
type slowRelease struct{ kv.Backend }

func (s slowRelease) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if w.Kind == kv.WriteDelete {
		time.Sleep(time.Second)
	}
	return s.Backend.Txn(ctx, conds, w)
}

// The term ends when the campaign ctx ends, before the release's write is
// done; Wait returns only once it is, so a process that exits after Wait
// leaves no key for the next leader to wait out.
func TestWaitReturnsOnceTheReleaseIsDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New()
		a := newElector(t, slowRelease{mem}, "a")
		a.Wait() // no term yet: returns at once
		ctx, resign := context.WithCancel(t.Context())
		term, _, err := a.Campaign(ctx)
		require.NoError(t, err)
		resign()
		<-term.Done()
		holder, err := a.Holder(t.Context())
		require.NoError(t, err)
		require.Equal(t, "a", holder, "the term ended before its release")
		ended := time.Now()
		a.Wait()
		require.Equal(t, time.Second, time.Since(ended))
		_, err = a.Holder(t.Context())
		require.ErrorIs(t, err, store.ErrNotFound, "released by the time Wait returned")
	})
}

// Wait waits for terms whose campaign ctx ended, not for a live one: one
// Loop stopping does not wait for another's term on a shared elector.
func TestWaitDoesNotWaitForALiveTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newElector(t, memstore.New(), "a")
		ctx, resign := context.WithCancel(t.Context())
		term, _, err := a.Campaign(ctx)
		require.NoError(t, err)
		waited := make(chan struct{})
		go func() { a.Wait(); close(waited) }()
		synctest.Wait()
		select {
		case <-waited:
		default:
			t.Fatal("Wait waits for a term whose ctx lives")
		}
		require.NoError(t, term.Err())
		resign()
		a.Wait()
		_, err = a.Holder(t.Context())
		require.ErrorIs(t, err, store.ErrNotFound, "released once its ctx ended")
	})
}
