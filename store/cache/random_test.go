package cache_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/objmarks"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

var cacheLong = flag.Bool("cache.long", false, "run the randomized cache proof with more seeds and writes")

// faultyListWatcher wraps a ListWatcher and injects faults from a seeded
// source: Lists that fail, and watches that end early with ErrExpired or
// without any error event (a broken stream).
type faultyListWatcher struct {
	src cache.ListWatcher[cacheSpec, cacheStatus]

	mu                           sync.Mutex
	rnd                          *rand.Rand
	listFails, expiries, breaks  int
	lists, watches, realExpiries int
}

func (f *faultyListWatcher) roll(p float64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rnd.Float64() < p
}

func (f *faultyListWatcher) List(ctx context.Context, opts store.ListOptions) (*store.List[cacheSpec, cacheStatus], error) {
	f.mu.Lock()
	f.lists++
	f.mu.Unlock()
	if f.roll(0.1) {
		f.mu.Lock()
		f.listFails++
		f.mu.Unlock()
		return nil, fmt.Errorf("injected: %w", store.ErrUnavailable)
	}
	return f.src.List(ctx, opts)
}

func (f *faultyListWatcher) Watch(ctx context.Context, from int64) (<-chan store.Event[cacheSpec, cacheStatus], error) {
	f.mu.Lock()
	f.watches++
	f.mu.Unlock()
	return relayWatch(ctx, f.src.Watch, from, func(ev store.Event[cacheSpec, cacheStatus]) (store.Event[cacheSpec, cacheStatus], bool, bool) {
		// Before each event: expire with probability 1/30, break with 1/60.
		f.mu.Lock()
		defer f.mu.Unlock()
		switch roll := f.rnd.IntN(60); {
		case roll < 2:
			f.expiries++
			return store.Event[cacheSpec, cacheStatus]{Revision: ev.Revision, Err: fmt.Errorf("injected: %w", store.ErrExpired)}, true, false
		case roll < 3:
			f.breaks++
			return ev, false, false
		}
		if errors.Is(ev.Err, store.ErrExpired) {
			f.realExpiries++
		}
		return ev, true, true
	})
}

// shadow rebuilds the cache's contents from nothing but the (old, new)
// pairs its handler receives, and records every inconsistency: a handler
// that saw every change exactly once, in order, ends equal to the cache.
type shadow struct {
	mu    sync.Mutex
	objs  map[string]*cobj
	wrong []string
}

func (s *shadow) handle(old, new *cobj) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := ""
	if old != nil {
		name = old.Meta.Name
	} else {
		name = new.Meta.Name
	}
	if s.objs[name] != old {
		s.wrong = append(s.wrong, fmt.Sprintf("%s: handler's old is not the previous new", name))
	}
	if new == nil {
		delete(s.objs, name)
	} else {
		s.objs[name] = new
	}
}

// The randomized proof of the issue: writers create, update, update the
// status of and delete objects, the store's history is compacted at random
// and the cache's List and Watch fail at random, so the cache relists again
// and again. After every run the cache equals the store, object for object,
// its indexes agree, and a handler that saw only (old, new) pairs has
// rebuilt the same contents.
func TestCacheEndsEqualToTheStoreUnderInjectedExpiries(t *testing.T) {
	seeds, writes := 6, max(400, 3000/raceScale)
	if *cacheLong {
		seeds, writes = 50, 5000
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { randomCacheRun(t, seed, writes) })
		})
	}
}

func randomCacheRun(t *testing.T, seed uint64, writes int) {
	rnd := rand.New(rand.NewPCG(seed, 0x5eed))
	mem := memstore.New(memstore.WithHistorySize(64), memstore.WithWatchBuffer(16))
	st, err := store.New[cacheSpec, cacheStatus](mem, "Widget")
	require.NoError(t, err)
	w := st.As("writer")
	src := &faultyListWatcher{src: st, rnd: rand.New(rand.NewPCG(seed, 0xfa17))}

	c := cache.New(src, cache.WithPageSize(5), cache.WithMutationDetector(func(err error) { t.Error(err) }))
	sh := &shadow{objs: map[string]*cobj{}}
	c.AddHandler(sh.handle)
	require.NoError(t, c.AddLabelIndex("tier"))
	r := marksOf(t, c) // kept from the first listing on
	stop := startCache(t, c)
	defer stop()

	ctx := t.Context()
	const names = 30
	var stamps []freshAt
	for i := range writes {
		if i%40 == 0 {
			// With the cache idle, stamp the objects' freshness; WasFresh
			// must answer the same later, whatever changed since (two
			// stamps back: fewer turns than the record keeps).
			synctest.Wait()
			stamps = append(stamps, stampFresh(r, c, names))
			for _, s := range stamps[max(0, len(stamps)-3):] {
				for name, want := range s.fresh {
					require.Equal(t, want, r.WasFresh(name, s.at), "write %d: %s was fresh at the stamp of write %d", i, name, s.write)
				}
			}
			stamps[len(stamps)-1].write = i
		}
		name := fmt.Sprintf("w%02d", rnd.IntN(names))
		cur, err := st.Get(ctx, name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			o := &cobj{Meta: store.Meta{Name: name, Labels: map[string]string{"tier": fmt.Sprint(rnd.IntN(3))}}}
			if rnd.IntN(2) == 0 {
				o.Meta.Owners = []store.OwnerRef{{Kind: "Owner", Name: "o", UID: fmt.Sprint("owner-", rnd.IntN(4))}}
			}
			_, err = w.Create(ctx, o)
		case err != nil:
		case rnd.IntN(4) == 0:
			_, err = w.Delete(ctx, name)
		case rnd.IntN(3) == 0:
			cur.Status.Ready = rnd.IntN(100)
			cur.Conditions = randomConditions(rnd)
			_, err = w.UpdateStatus(ctx, cur)
		default:
			cur.Spec.Replicas = rnd.IntN(100)
			cur.Meta.Labels = map[string]string{"tier": fmt.Sprint(rnd.IntN(3))}
			cur.Meta.Annotations = randomAnnotations(rnd)
			_, err = w.Update(ctx, cur)
		}
		require.NoError(t, err, "write %d", i)
		if rnd.IntN(40) == 0 {
			require.NoError(t, mem.Compact(ctx, mem.Revision()))
		}
		// Writes arrive a few milliseconds apart, in virtual time, so the
		// cache's relist backoffs (10ms and up) overlap with them.
		time.Sleep(time.Duration(rnd.IntN(5)) * time.Millisecond)
	}

	rev := mem.Revision()
	require.NoError(t, c.WaitFor(ctx, rev))
	synctest.Wait()
	requireCacheEqualsStore(t, c, st, sh)
	require.NoError(t, c.Check())

	src.mu.Lock()
	defer src.mu.Unlock()
	t.Logf("seed %d: %d writes to revision %d; %d lists (%d failed), %d watches (%d injected expiries, %d breaks, %d real expiries)",
		seed, writes, rev, src.lists, src.listFails, src.watches, src.expiries, src.breaks, src.realExpiries)
	require.Positive(t, src.expiries+src.realExpiries, "the run exercised relisting after expiry")
}

func requireCacheEqualsStore(t *testing.T, c *cache.Cache[cacheSpec, cacheStatus], st *store.Store[cacheSpec, cacheStatus], sh *shadow) {
	t.Helper()
	want, err := st.List(t.Context(), store.ListOptions{})
	require.NoError(t, err)
	got := c.List(nil)
	require.Equal(t, len(want.Items), len(got))
	for i := range want.Items {
		require.Equal(t, *want.Items[i], *got[i], "object %s", want.Items[i].Meta.Name)
	}
	var names []string
	for i := range 30 {
		names = append(names, fmt.Sprintf("w%02d", i))
	}
	requireMarks(t, c, names...)

	sh.mu.Lock()
	require.Empty(t, sh.wrong)
	require.Len(t, sh.objs, len(got))
	for _, o := range got {
		require.Same(t, o, sh.objs[o.Meta.Name], "the handler saw %s's last state", o.Meta.Name)
	}
	sh.mu.Unlock()

	for tier := range 3 {
		v := fmt.Sprint(tier)
		var wantNames []string
		for _, o := range want.Items {
			if o.Meta.Labels["tier"] == v {
				wantNames = append(wantNames, o.Meta.Name)
			}
		}
		require.Equal(t, wantNames, nilIfEmpty(objNames(c.ByLabel("tier", v))), "label index tier=%s", v)
	}
	for owner := range 4 {
		uid := fmt.Sprint("owner-", owner)
		var wantNames []string
		for _, o := range want.Items {
			if len(o.Meta.Owners) > 0 && o.Meta.Owners[0].UID == uid {
				wantNames = append(wantNames, o.Meta.Name)
			}
		}
		require.Equal(t, wantNames, nilIfEmpty(objNames(c.ByIndex(cache.IndexOwnerUID, uid))), "owner index %s", uid)
	}
}

// randomAnnotations returns none, or the annotations a Loop reads
// (internal/objmarks) with values that set them and values that do not.
func randomAnnotations(rnd *rand.Rand) map[string]string {
	if rnd.IntN(2) == 0 {
		return nil
	}
	vals := []string{"true", "false", ""}
	return map[string]string{
		objmarks.PausedAnnotation:      vals[rnd.IntN(3)],
		objmarks.ObserveOnlyAnnotation: vals[rnd.IntN(3)],
	}
}

// randomConditions returns up to two of the conditions a Loop reads and
// writes, each with a random status and observed generation.
func randomConditions(rnd *rand.Rand) []store.Condition {
	types := []string{"Paused", "Reconciling", "Ready"}
	statuses := []store.ConditionStatus{store.ConditionTrue, store.ConditionFalse, store.ConditionUnknown}
	var out []store.Condition
	for _, i := range rnd.Perm(3)[:rnd.IntN(3)] {
		out = append(out, store.Condition{Type: types[i], Status: statuses[rnd.IntN(3)], Reason: "Test", ObservedGeneration: int64(rnd.IntN(2))})
	}
	return out
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// freshAt is which objects were new (objmarks.Marks.Fresh) when a Cache's
// marks read returned at.
type freshAt struct {
	at    uint64
	write int
	fresh map[string]bool
}

// stampFresh reads a stamp and which of the names w00.. hold a new object,
// with c idle.
func stampFresh(r objmarks.Reader, c *cache.Cache[cacheSpec, cacheStatus], names int) freshAt {
	_, _, at := r.Marks("w00")
	s := freshAt{at: at, fresh: map[string]bool{}}
	for i := range names {
		name := fmt.Sprintf("w%02d", i)
		o, ok := c.Get(name)
		s.fresh[name] = ok && objmarks.Of(&o.Meta, o.Conditions).Fresh()
	}
	return s
}
