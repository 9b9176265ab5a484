package cache_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// keepSet is a WithKeep function whose answer the test changes.
type keepSet struct {
	mu   sync.Mutex
	kept map[string]bool
}

func (k *keepSet) keep(name string) bool { k.mu.Lock(); defer k.mu.Unlock(); return k.kept[name] }
func (k *keepSet) set(names ...string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kept = map[string]bool{}
	for _, n := range names {
		k.kept[n] = true
	}
}

// A Cache with WithKeep holds only the objects keep accepts, drops changes
// to the others on arrival, and after keep's answer changed, Refilter makes
// it hold what keep accepts now: the objects that left reach the handlers
// as deletions, those that arrived as additions.
func TestKeepHoldsWhatKeepAcceptsAndRefilterFollowsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		w := st.As("alice")
		revs := map[string]int64{}
		for _, name := range []string{"a", "b", "c"} {
			revs[name], err = w.Create(ctx, &cobj{Meta: store.Meta{Name: name}})
			require.NoError(t, err)
		}
		var k keepSet
		k.set("a", "b")
		c := cache.New[cacheSpec, cacheStatus](st, cache.WithKeep(k.keep))
		var rec recorder
		c.AddHandler(rec.handle)
		stop := startCache(t, c)
		require.NoError(t, c.WaitForSync(ctx))
		require.Equal(t, []string{"a", "b"}, c.Keys())
		rec.take()

		o, err := st.Get(ctx, "c")
		require.NoError(t, err)
		o.Spec.Replicas = 2
		revs["c"], err = w.Update(ctx, o)
		require.NoError(t, err)
		synctest.Wait()
		require.Empty(t, rec.take(), "a change to an object keep rejects is dropped on arrival")
		require.Equal(t, []string{"a", "b"}, c.Keys())

		k.set("b", "c")
		require.NoError(t, c.Refilter(ctx))
		require.Equal(t, []string{"b", "c"}, c.Keys())
		require.Equal(t, []string{fmt.Sprintf("del a@%d", revs["a"]), fmt.Sprintf("add c@%d", revs["c"])}, rec.take())
		got, _ := c.Get("c")
		require.Equal(t, 2, got.Spec.Replicas, "the listing brought c as stored now")

		stop()
		require.ErrorIs(t, c.Refilter(ctx), cache.ErrNotRunning)
	})
}

// Refilter returns at once without WithKeep, and a keep that panics keeps
// the object (a Cache missing an object would take it for deleted) and is
// counted as a panic.
func TestKeepWithoutFunctionAndPanickingKeep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		_, err = st.As("alice").Create(ctx, &cobj{Meta: store.Meta{Name: "a"}})
		require.NoError(t, err)
		require.NoError(t, cache.New[cacheSpec, cacheStatus](st).Refilter(ctx), "no keep: nothing to do, not even a running Cache")

		c := cache.New[cacheSpec, cacheStatus](st,
			cache.WithKeep(func(string) bool { panic("keep bug") }),
			cache.WithLogger(slog.New(slog.DiscardHandler)))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))
		require.Equal(t, []string{"a"}, c.Keys())
		require.Positive(t, c.Panics())
	})
}

// Refilter waits for a listing that began after it: a Cache whose store
// cannot be listed keeps it waiting until ctx ends.
func TestRefilterWaitsForAListing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		fail := &failingLists{ListWatcher: st}
		c := cache.New[cacheSpec, cacheStatus](fail, cache.WithKeep(func(string) bool { return true }))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		fail.set(true)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.Refilter(ctx) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Refilter returned %v while every listing failed", err)
		default:
		}
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		fail.set(false)
		require.NoError(t, c.Refilter(t.Context()), "and returns once a listing succeeds")
	})
}

type failingLists struct {
	cache.ListWatcher[cacheSpec, cacheStatus]
	mu   sync.Mutex
	fail bool
}

func (f *failingLists) set(v bool) { f.mu.Lock(); f.fail = v; f.mu.Unlock() }

func (f *failingLists) List(ctx context.Context, o store.ListOptions) (*store.List[cacheSpec, cacheStatus], error) {
	f.mu.Lock()
	fail := f.fail
	f.mu.Unlock()
	if fail {
		return nil, errors.New("list refused")
	}
	return f.ListWatcher.List(ctx, o)
}

// Prune drops what keep rejects now from memory, with no listing (it works
// while every listing fails): the objects that left reach the handlers as
// deletions and leave the indexes. Without WithKeep it drops nothing, a
// keep that panics keeps the object, and after Run returned it says so.
func TestPruneDropsWhatKeepRejectsWithoutListing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		revs := map[string]int64{}
		for _, name := range []string{"a", "b", "c"} {
			revs[name], err = st.As("alice").Create(ctx, &cobj{Meta: store.Meta{Name: name, Labels: map[string]string{"team": "x"}}})
			require.NoError(t, err)
		}
		var k keepSet
		k.set("a", "b", "c")
		fail := &failingLists{ListWatcher: st}
		c := cache.New[cacheSpec, cacheStatus](fail, cache.WithKeep(k.keep))
		require.NoError(t, c.AddLabelIndex("team"))
		var rec recorder
		c.AddHandler(rec.handle)
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))
		rec.take()

		fail.set(true)
		k.set("b")
		require.NoError(t, c.Prune(ctx))
		require.Equal(t, []string{"b"}, c.Keys())
		require.Len(t, c.ByLabel("team", "x"), 1)
		require.Equal(t, []string{fmt.Sprintf("del a@%d", revs["a"]), fmt.Sprintf("del c@%d", revs["c"])}, rec.take())
		require.NoError(t, c.Prune(ctx))
		require.Empty(t, rec.take(), "nothing more to drop")
		require.Zero(t, c.Relists(), "no listing")

		require.NoError(t, cache.New[cacheSpec, cacheStatus](st).Prune(ctx), "no keep: nothing to drop, not even a running Cache")
		k.set()
		panicky := cache.New[cacheSpec, cacheStatus](st,
			cache.WithKeep(func(name string) bool {
				if name == "a" {
					panic("keep bug")
				}
				return k.keep(name)
			}),
			cache.WithLogger(slog.New(slog.DiscardHandler)))
		stopPanicky := startCache(t, panicky)
		require.NoError(t, panicky.WaitForSync(ctx))
		require.Equal(t, []string{"a"}, panicky.Keys())
		require.NoError(t, panicky.Prune(ctx))
		require.Equal(t, []string{"a"}, panicky.Keys(), "a keep that panics keeps the object")
		stopPanicky()
		require.ErrorIs(t, panicky.Prune(ctx), cache.ErrNotRunning)
	})
}

// Run's goroutine hears of a Prune call, a Refilter call and the end of its
// context on one channel (see serve): a Prune and a Refilter asked while
// it was busy share one nudge and are both served, and Run returns when
// its context ends while the watch is quiet, with no event to wake it.
func TestPruneRefilterAndRunsEndShareOneNudge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		for _, name := range []string{"a", "b", "c"} {
			_, err = st.As("alice").Create(ctx, &cobj{Meta: store.Meta{Name: name}})
			require.NoError(t, err)
		}
		var k keepSet
		k.set("a", "b", "c")
		c := cache.New[cacheSpec, cacheStatus](st, cache.WithKeep(k.keep))
		gate := make(chan struct{})
		c.AddHandler(func(old, new *cobj) {
			if new != nil && new.Meta.Name == "a" && old != nil {
				<-gate // Run's goroutine is busy while both calls are made
			}
		})
		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		ran := make(chan error, 1)
		go func() { ran <- c.Run(runCtx) }()
		require.NoError(t, c.WaitForSync(ctx))

		o, ok := c.Get("a")
		require.True(t, ok)
		u := *o
		u.Spec.Replicas++
		_, err = st.As("alice").Update(ctx, &u)
		require.NoError(t, err)
		synctest.Wait() // the handler holds Run's goroutine
		k.set("b")
		pruned, refiltered := make(chan error, 1), make(chan error, 1)
		go func() { pruned <- c.Prune(ctx) }()
		go func() { refiltered <- c.Refilter(ctx) }()
		synctest.Wait()
		close(gate)
		synctest.Wait()
		for what, ch := range map[string]chan error{"Prune": pruned, "Refilter": refiltered} {
			select {
			case err := <-ch:
				require.NoError(t, err, what)
			default:
				t.Fatalf("%s still waits after Run's goroutine went back to the watch", what)
			}
		}
		require.Equal(t, []string{"b"}, c.Keys())

		cancel()
		synctest.Wait()
		select {
		case err := <-ran:
			require.NoError(t, err)
		default:
			t.Fatal("Run still waits on a quiet watch after its context ended")
		}
	})
}
