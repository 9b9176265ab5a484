package cache_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// steppedSource passes a Store's List and Watch through (and, for a Cache
// told to call them with SetLean, its ListReusing and WatchWithoutPrev),
// recording each event its watches deliver, and loses events on command:
// drop turns the event of one revision into a bare progress mark (a watch
// that loses a change and carries on), expire ends the watch with
// ErrExpired instead of delivering the next event.
type steppedSource struct {
	src *store.Store[cacheSpec, cacheStatus]

	mu     sync.Mutex
	drop   int64
	expire bool
	seen   map[int64]store.Event[cacheSpec, cacheStatus]
}

func (s *steppedSource) List(ctx context.Context, opts store.ListOptions) (*store.List[cacheSpec, cacheStatus], error) {
	return s.src.List(ctx, opts)
}

func (s *steppedSource) ListReusing(ctx context.Context, opts store.ListOptions, reuse func(string, int64) *cobj, shared bool) (*store.List[cacheSpec, cacheStatus], error) {
	return cache.Lean(s.src).ListReusing(ctx, opts, reuse, shared)
}

func (s *steppedSource) Watch(ctx context.Context, from int64) (<-chan store.Event[cacheSpec, cacheStatus], error) {
	return relayWatch(ctx, s.src.Watch, from, s.step)
}

func (s *steppedSource) WatchWithoutPrev(ctx context.Context, from int64, keep func(string) bool) (<-chan store.Event[cacheSpec, cacheStatus], error) {
	return relayWatch(ctx, func(ctx context.Context, from int64) (<-chan store.Event[cacheSpec, cacheStatus], error) {
		return cache.Lean(s.src).WatchWithoutPrev(ctx, from, keep)
	}, from, s.step)
}

func (s *steppedSource) step(ev store.Event[cacheSpec, cacheStatus]) (store.Event[cacheSpec, cacheStatus], bool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.expire && !ev.Progress:
		s.expire = false
		ev = store.Event[cacheSpec, cacheStatus]{Revision: ev.Revision - 1, Err: fmt.Errorf("injected: %w", store.ErrExpired)}
	case ev.Revision == s.drop && !ev.Progress:
		ev = store.Event[cacheSpec, cacheStatus]{Revision: ev.Revision, Progress: true}
	case !ev.Progress && ev.Err == nil:
		s.seen[ev.Revision] = ev
	}
	return ev, true, true
}

// pairs records the (old, new) pairs a handler is given.
type pairs struct {
	mu  sync.Mutex
	got [][2]*cobj
}

func (p *pairs) handle(old, new *cobj) {
	p.mu.Lock()
	p.got = append(p.got, [2]*cobj{old, new})
	p.mu.Unlock()
}

func (p *pairs) take() [][2]*cobj {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := p.got
	p.got = nil
	return got
}

// A Cache over a Store calls its lean methods (leanSource): a watch that
// leaves out the state before each change (store/cache never reads
// Event.Prev), and listings that reuse the objects the Cache holds at their
// stored revision. The differential proof: two Caches follow one Store, one
// through the lean methods and one through List and Watch, through the same random writes (creates, spec and status
// updates, deletes and re-creates, undecodable values, valid values over
// them, purges) and the same lost events, expired watches and relists;
// after every step their handlers have been given equal (old, new) pairs.
// And on the full side, the old object of every change the watch delivered
// (a key whose events were not lost) equals the event's decoded Prev: the
// object the Cache held is the value at the key's previous revision.
func TestCacheWithoutPrevHandsHandlersTheSamePairs(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { prevDifferential(t, seed, max(300, 1500/raceScale)) })
		})
	}
}

func prevDifferential(t *testing.T, seed uint64, steps int) {
	ctx := t.Context()
	rnd := rand.New(rand.NewPCG(seed, 0x9e7))
	mem := memstore.New()
	st, err := store.New[cacheSpec, cacheStatus](mem, "Widget")
	require.NoError(t, err)
	w := st.As("writer")

	var srcs [2]*steppedSource
	var caches [2]*cache.Cache[cacheSpec, cacheStatus]
	var recs [2]*pairs
	for i := range 2 {
		srcs[i] = &steppedSource{src: st, seen: map[int64]store.Event[cacheSpec, cacheStatus]{}}
		caches[i] = cache.New(srcs[i], cache.WithRelistPeriod(0), cache.WithMutationDetector(func(err error) { t.Error(err) }))
		if i == 0 {
			caches[i].SetLean(srcs[i])
		}
		recs[i] = &pairs{}
		caches[i].AddHandler(recs[i].handle)
		defer startCache(t, caches[i])()
	}
	lean, full := 0, 1

	const names = 8
	stale := map[string]bool{}  // keys with a lost event not yet repaired by a listing
	poison := map[string]bool{} // keys whose value is undecodable before this step
	var counts struct{ compared, poisoned, drops, expiries, relists, junk int }
	for step := range steps {
		name := fmt.Sprintf("w%d", rnd.IntN(names))
		next := mem.Revision() + 1
		wasStale := stale[name]
		switch r := rnd.IntN(20); {
		case r == 0:
			for _, s := range srcs {
				s.mu.Lock()
				s.drop = next
				s.mu.Unlock()
			}
			stale[name] = true
			counts.drops++
		case r == 1:
			for _, s := range srcs {
				s.mu.Lock()
				s.expire = true
				s.mu.Unlock()
			}
			clear(stale) // the relist repairs everything
			counts.expiries++
		}
		relisted, wasPoison := false, poison[name]
		cur, err := st.Get(ctx, name)
		switch {
		case errors.As(err, new(*store.DecodeError)):
			poison[name] = false
			if rnd.IntN(2) == 0 {
				_, err = w.Purge(ctx, name, 0)
			} else {
				_, err = mem.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: st.Prefix() + name,
					Value: fmt.Appendf(nil, `{"metadata":{"kind":"Widget","name":%q,"uid":"raw-%d"},"spec":{"replicas":%d}}`, name, step, rnd.IntN(9))})
			}
		case errors.Is(err, store.ErrNotFound):
			_, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: name, Labels: map[string]string{"tier": fmt.Sprint(rnd.IntN(3))}},
				Spec: cacheSpec{Image: "img", Replicas: rnd.IntN(9)}})
		case err != nil:
			t.Fatalf("step %d: get %s: %v", step, name, err)
		case rnd.IntN(6) == 0:
			_, err = w.Delete(ctx, name)
		case rnd.IntN(8) == 0:
			_, err = mem.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: st.Prefix() + name, Value: []byte(`{"spec":`)})
			poison[name] = true
			counts.junk++
		case rnd.IntN(3) == 0:
			cur.Status.Ready = rnd.IntN(9)
			_, err = w.UpdateStatus(ctx, cur)
		default:
			cur.Spec.Replicas = rnd.IntN(9)
			cur.Meta.Labels = map[string]string{"tier": fmt.Sprint(rnd.IntN(3))}
			_, err = w.Update(ctx, cur)
		}
		require.NoError(t, err, "step %d", step)
		rev := mem.Revision()
		if rev != next { // no write: nothing to lose
			for _, s := range srcs {
				s.mu.Lock()
				s.drop = 0
				s.mu.Unlock()
			}
			stale[name] = wasStale
		}
		for _, c := range caches {
			require.NoError(t, c.WaitFor(ctx, rev))
		}
		synctest.Wait()
		if rnd.IntN(25) == 0 {
			for _, c := range caches {
				require.NoError(t, c.RelistNow(ctx))
			}
			relisted = true
			counts.relists++
		}
		got := [2][][2]*cobj{recs[lean].take(), recs[full].take()}
		require.Equal(t, got[full], got[lean], "step %d: the pairs handed to handlers", step)

		srcs[lean].mu.Lock()
		if ev, ok := srcs[lean].seen[rev]; ok {
			require.Nil(t, ev.Prev, "step %d: the lean watch leaves Prev out", step)
		}
		srcs[lean].mu.Unlock()
		srcs[full].mu.Lock()
		ev, delivered := srcs[full].seen[rev]
		srcs[full].mu.Unlock()
		switch {
		case rev != next || !delivered || stale[name] || relisted:
			// No write (an update that changed nothing), a lost event, or
			// pairs from a listing.
		case wasPoison:
			// The value before the change did not decode: the event has
			// no Prev, and the Cache hands over the last valid object it
			// held for the key, if any (see Cache.Quarantined).
			require.Nil(t, ev.Prev, "step %d", step)
			counts.poisoned++
		case ev.Type == store.Modified || ev.Type == store.Deleted:
			require.Len(t, got[full], 1, "step %d", step)
			require.Equal(t, ev.Prev, got[full][0][0], "step %d: the Cache's old object is the event's Prev", step)
			counts.compared++
		}
		if relisted {
			clear(stale)
		}
	}
	t.Logf("seed %d: %d steps; %d old objects compared with Prev, %d changes of undecodable values; %d lost events, %d expiries, %d relists, %d undecodable writes",
		seed, steps, counts.compared, counts.poisoned, counts.drops, counts.expiries, counts.relists, counts.junk)
	require.Positive(t, counts.drops)
	require.Positive(t, counts.expiries)
	require.Positive(t, counts.junk)
	require.Positive(t, counts.poisoned)
	require.Greater(t, counts.compared, steps/3)
}
