package cache_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// requireGetAgrees requires Get to serve, for each name, the very object
// List holds under it, or nothing when List holds none: every path that
// changes the items (a watch event, a relist's repair, a Prune) must show
// in both, even were Get to read a copy of the items of its own.
func requireGetAgrees(t *testing.T, c *cache.Cache[cacheSpec, cacheStatus], names ...string) {
	t.Helper()
	listed := map[string]*cobj{}
	for _, obj := range c.List(nil) {
		listed[obj.Meta.Name] = obj
	}
	for _, name := range names {
		got, ok := c.Get(name)
		want := listed[name]
		require.Equal(t, want != nil, ok, "Get(%q) finds what List holds", name)
		require.Same(t, want, got, "Get(%q) serves List's object", name)
	}
}

// Get serves what the Cache holds after each kind of change a watch brings
// (a creation, an update, a deletion, a re-creation under a new UID), after
// a periodic relist repairs what a lossy watch lost (an update, a deletion
// and a creation it never delivered), and after a Prune drops objects.
func TestGetServesWhatTheCacheHoldsAfterEveryChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		w := st.As("alice")
		lost := map[string]bool{}
		lossy := droppingWatcher{st, func(ev store.Event[cacheSpec, cacheStatus]) bool { return lost[ev.Object.Meta.Name] }}
		const period = time.Minute
		var pruning atomic.Bool // keep rejects "pruned" from then on
		keep := func(name string) bool { return name != "pruned" || !pruning.Load() }
		c := cache.New[cacheSpec, cacheStatus](lossy, cache.WithRelistPeriod(period), cache.WithKeep(keep))
		names := []string{"a", "b", "c", "d", "pruned"}
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))
		step := func(what string, rev int64) {
			t.Helper()
			require.NoError(t, c.WaitFor(ctx, rev), what)
			requireGetAgrees(t, c, names...)
		}

		rev, err := w.Create(ctx, &cobj{Meta: store.Meta{Name: "a"}, Spec: cacheSpec{Replicas: 1}})
		require.NoError(t, err)
		step("created", rev)
		a, err := st.Get(ctx, "a")
		require.NoError(t, err)
		a.Spec.Replicas = 2
		rev, err = w.Update(ctx, a)
		require.NoError(t, err)
		step("updated", rev)
		got, _ := c.Get("a")
		require.Equal(t, 2, got.Spec.Replicas)
		rev, err = w.Delete(ctx, "a")
		require.NoError(t, err)
		step("deleted", rev)
		rev, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: "a"}, Spec: cacheSpec{Replicas: 3}})
		require.NoError(t, err)
		step("created again", rev)
		got, _ = c.Get("a")
		require.Equal(t, 3, got.Spec.Replicas)

		// Changes the watch loses, repaired by the next relist.
		for _, name := range []string{"b", "c"} {
			_, err := w.Create(ctx, &cobj{Meta: store.Meta{Name: name}, Spec: cacheSpec{Replicas: 1}})
			require.NoError(t, err)
		}
		rev, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: "pruned"}})
		require.NoError(t, err)
		step("b, c and pruned created", rev)
		lost["b"], lost["c"], lost["d"] = true, true, true
		b, err := st.Get(ctx, "b")
		require.NoError(t, err)
		b.Spec.Replicas = 5
		_, err = w.Update(ctx, b)
		require.NoError(t, err)
		_, err = w.Delete(ctx, "c")
		require.NoError(t, err)
		_, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: "d"}})
		require.NoError(t, err)
		// A change the watch delivers, to wait for: WaitFor of a lost one
		// would wait, in the bubble's time, for the relist.
		a, err = st.Get(ctx, "a")
		require.NoError(t, err)
		a.Spec.Replicas = 4
		rev, err = w.Update(ctx, a)
		require.NoError(t, err)
		step("changes lost", rev)
		require.Zero(t, c.DriftRepairs())
		got, _ = c.Get("b")
		require.Equal(t, 1, got.Spec.Replicas, "the watch lost b's update")
		time.Sleep(period)
		synctest.Wait()
		require.Equal(t, int64(3), c.DriftRepairs())
		requireGetAgrees(t, c, names...)
		got, _ = c.Get("b")
		require.Equal(t, 5, got.Spec.Replicas, "the relist repaired b")
		_, ok := c.Get("c")
		require.False(t, ok, "the relist repaired c's deletion")

		_, ok = c.Get("pruned")
		require.True(t, ok, "kept until pruned")
		pruning.Store(true)
		require.NoError(t, c.Prune(ctx))
		requireGetAgrees(t, c, names...)
		_, ok = c.Get("pruned")
		require.False(t, ok, "pruned")
	})
}

// While Run's goroutine applies changes, Gets on other goroutines (a
// Loop's workers) see each name's object move forward only, and see a
// write once WaitFor of its revision returned; a deleted name is absent
// once its deletion is waited for. Run it with -race.
func TestGetDuringChangesMovesForward(t *testing.T) {
	ctx := t.Context()
	st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
	require.NoError(t, err)
	w := st.As("alice")
	c := cache.New[cacheSpec, cacheStatus](st)
	stop := startCache(t, c)
	defer stop()
	require.NoError(t, c.WaitForSync(ctx))

	const keys, rounds = 8, 40
	name := func(i int) string { return fmt.Sprintf("k%d", i) }
	done := make(chan struct{})
	var readers sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		readers.Go(func() {
			seen := map[string]int64{}
			for {
				select {
				case <-done:
					return
				default:
				}
				for i := range keys {
					obj, ok := c.Get(name(i))
					if !ok {
						continue // deleted, or not created yet
					}
					if obj.Meta.Name != name(i) || obj.Meta.Revision < seen[name(i)] {
						errs <- fmt.Errorf("Get(%q) = %s at revision %d after revision %d", name(i), obj.Meta.Name, obj.Meta.Revision, seen[name(i)])
						return
					}
					seen[name(i)] = obj.Meta.Revision
				}
			}
		})
	}
	for r := range rounds {
		for i := range keys {
			n := name(i)
			var rev int64
			switch {
			case r%10 == 9 && i%2 == 0: // every tenth round, half the keys go
				rev, err = w.Delete(ctx, n)
			case r == 0 || r%10 == 0 && i%2 == 0:
				rev, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: n}, Spec: cacheSpec{Replicas: r}})
			default:
				var obj *cobj
				obj, err = st.Get(ctx, n)
				require.NoError(t, err)
				obj.Spec.Replicas = r
				rev, err = w.Update(ctx, obj)
			}
			require.NoError(t, err)
			require.NoError(t, c.WaitFor(ctx, rev))
			obj, ok := c.Get(n)
			if r%10 == 9 && i%2 == 0 {
				require.False(t, ok, "%s deleted at %d", n, rev)
				continue
			}
			require.True(t, ok, "%s written at %d", n, rev)
			require.GreaterOrEqual(t, obj.Meta.Revision, rev, "%s written at %d", n, rev)
			require.Equal(t, r, obj.Spec.Replicas)
		}
	}
	close(done)
	readers.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// Get finds every name through many creations and deletions (a table of
// names that is made anew as it fills must keep the names held and drop
// those deleted), and a name deleted and created again is found again.
func TestGetFindsManyNamesThroughDeletions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		w := st.As("alice")
		c := cache.New[cacheSpec, cacheStatus](st)
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))
		var names []string
		var rev int64
		for i := range 300 {
			names = append(names, fmt.Sprintf("n%03d", i))
			rev, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: names[i]}, Spec: cacheSpec{Replicas: i}})
			require.NoError(t, err)
			if i%3 == 2 { // a third goes again, the name before it
				rev, err = w.Delete(ctx, names[i-1])
				require.NoError(t, err)
			}
		}
		require.NoError(t, c.WaitFor(ctx, rev))
		requireGetAgrees(t, c, names...)
		require.Equal(t, 200, c.Len())
		for i := 1; i < 300; i += 3 { // the deleted names come back
			rev, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: names[i]}, Spec: cacheSpec{Replicas: -i}})
			require.NoError(t, err)
		}
		require.NoError(t, c.WaitFor(ctx, rev))
		requireGetAgrees(t, c, names...)
		for i, name := range names {
			got, ok := c.Get(name)
			require.True(t, ok, name)
			want := i
			if i%3 == 1 {
				want = -i
			}
			require.Equal(t, want, got.Spec.Replicas, name)
		}
	})
}
