package cache_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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

// specDecodes counts countedSpec decodes. Only
// TestRelistAfterExpiryDecodesOnlyChangedObjects reads it, and it runs
// alone (no t.Parallel).
var specDecodes atomic.Int64

// countedSpec is a Spec whose every decode is counted.
type countedSpec struct {
	Image string `json:"image"`
}

func (s *countedSpec) UnmarshalJSON(b []byte) error {
	specDecodes.Add(1)
	type plain countedSpec
	return json.Unmarshal(b, (*plain)(s))
}

// A writer that runs more than the history window ahead of a Cache's watch
// ends the watch with ErrExpired, and the Cache relists. The relist decodes
// only the objects that changed while the Cache was blind: an object whose
// revision the Cache already holds keeps its cached value, undecoded. (It
// decoded all n before: the cliff at 1M objects.) The writer runs ahead
// while a handler holds the Cache up; the watch then holds at most four
// events (one in the handler, one in each channel and one in hand), which
// are decoded as events.
func TestRelistAfterExpiryDecodesOnlyChangedObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, window, inFlight = 500, 16, 4
		ctx := t.Context()
		mem := memstore.New(memstore.WithHistorySize(window), memstore.WithWatchBuffer(1))
		st, err := store.New[countedSpec, cacheStatus](mem, "Widget")
		require.NoError(t, err)
		w := st.As("writer")
		for i := range n {
			_, err := w.Create(ctx, &store.Object[countedSpec, cacheStatus]{Meta: store.Meta{Name: fmt.Sprintf("w%03d", i)}, Spec: countedSpec{Image: "v1"}})
			require.NoError(t, err)
		}
		c := cache.New(st, cache.WithRelistPeriod(0), cache.WithRelistBackoff(fixedBackoff))
		var hold atomic.Bool
		release := make(chan struct{})
		c.AddHandler(func(_, _ *store.Object[countedSpec, cacheStatus]) {
			if hold.Load() {
				<-release
			}
		})
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- c.Run(runCtx) }()
		require.NoError(t, c.WaitForSync(ctx))
		require.Equal(t, n, c.Len())
		relists := c.Relists()

		// 3 windows of updates to 2 objects while the first update's
		// handler call holds the Cache up.
		hold.Store(true)
		var changed []*store.Object[countedSpec, cacheStatus]
		for i := range 3 * window {
			o, err := st.Get(ctx, fmt.Sprintf("w%03d", i%2))
			require.NoError(t, err)
			o.Spec.Image = fmt.Sprintf("v%d", i+2)
			_, err = w.Update(ctx, o)
			require.NoError(t, err)
			if i >= 3*window-2 {
				changed = append(changed, o)
			}
		}
		synctest.Wait()
		before := specDecodes.Load()
		hold.Store(false)
		close(release)
		time.Sleep(2 * time.Second) // the watch expires; the Cache relists after 1s
		synctest.Wait()
		require.Equal(t, relists+1, c.Relists(), "the watch expired and the Cache relisted")
		decodes := specDecodes.Load() - before
		require.LessOrEqual(t, decodes, int64(len(changed)+inFlight),
			"the relist decodes the %d changed objects (and the watch its events in flight), not the %d unchanged ones", len(changed), n-len(changed))
		for _, want := range changed {
			got, ok := c.Get(want.Meta.Name)
			require.True(t, ok)
			require.Equal(t, want.Meta.Revision, got.Meta.Revision)
			require.Equal(t, want.Spec, got.Spec)
		}
		cancel()
		require.NoError(t, <-done)
	})
}

// A listing that holds every cached object at its cached revision (a
// relist after the watch fell behind, when nothing was deleted) reports no
// change and allocates nothing, however many objects the Cache holds: it
// builds no set of the listed names to find the missing ones. A listing
// that leaves one out still deletes it.
func TestUnchangedListingAllocatesNothingPerObject(t *testing.T) {
	for _, n := range []int{100, 5000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				objs := make([]*cobj, n)
				for i := range objs {
					objs[i] = mkObj(fmt.Sprintf("o%05d", i), fmt.Sprint("u", i), int64(i+1), nil)
				}
				c := cache.New(newScripted(int64(n), objs...), cache.WithRelistPeriod(0), cache.WithMutationDetector(nil))
				stop := startCache(t, c)
				defer stop()
				require.NoError(t, c.WaitForSync(t.Context()))
				l := &store.List[cacheSpec, cacheStatus]{Items: c.List(nil), Revision: int64(n)}
				allocs := testing.AllocsPerRun(10, func() {
					if changes := c.ApplyListing(l); changes != 0 {
						t.Fatalf("%d changes from an unchanged listing", changes)
					}
				})
				require.Zero(t, allocs, "allocations per listing of %d unchanged objects", n)

				l.Items = l.Items[1:]
				require.Equal(t, 1, c.ApplyListing(l))
				_, ok := c.Get("o00000")
				require.False(t, ok, "the object the listing left out is deleted")
				require.Equal(t, n-1, c.Len())
			})
		})
	}
}

// The listing after a watch ended is applied page by page as it is read:
// an object it replaces is garbage once its page is applied, not once the
// whole kind is listed (read whole, it held a second copy of every object
// changed while the Cache was blind, the peak of a controller's heap). So
// the handlers hear of the first page's changes before the second page is
// read; each page's deletions (held objects in its range of names that it
// leaves out) come first, and the Cache moves to the listing's revision at
// its end.
func TestRelistAppliesEachPageAsItIsRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScripted(10, mkObj("a", "ua", 1, nil), mkObj("b", "ub", 2, nil), mkObj("c", "uc", 3, nil),
			mkObj("d", "ud", 4, nil), mkObj("e", "ue", 5, nil), mkObj("f", "uf", 6, nil))
		c := cache.New(src, cache.WithPageSize(2), cache.WithRelistPeriod(0), cache.WithRelistBackoff(fixedBackoff))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		var rec recorder
		var listsSeen []int
		var revs []int64
		c.AddHandler(func(old, new *cobj) {
			rec.handle(old, new)
			listsSeen = append(listsSeen, src.listCount())
			revs = append(revs, c.Revision())
		})
		rec.take()
		listsSeen, revs = nil, nil
		w := <-src.streams
		lists := src.listCount()

		// While blind: every object but c is modified, c deleted, g added.
		src.set(30, mkObj("a", "ua", 21, nil), mkObj("b", "ub", 22, nil), mkObj("d", "ud", 24, nil),
			mkObj("e", "ue", 25, nil), mkObj("f", "uf", 26, nil), mkObj("g", "ug", 27, nil))
		w.send(evExpired(10))
		<-src.streams
		synctest.Wait()
		require.Equal(t, []string{"mod a@1->21", "mod b@2->22", "del c@3", "mod d@4->24", "mod e@5->25", "mod f@6->26", "add g@27"}, rec.take())
		require.Equal(t, []int{lists + 1, lists + 1, lists + 2, lists + 2, lists + 2, lists + 3, lists + 3}, listsSeen,
			"each page's changes before the next page is read")
		require.Equal(t, []int64{10, 10, 10, 10, 10, 10, 10}, revs, "the Cache stays at its revision until the listing ends")
		require.Equal(t, int64(30), c.Revision())
		require.Equal(t, []string{"a", "b", "d", "e", "f", "g"}, c.Keys())
	})
}

// reversedPages serves each page of a scriptedSource backwards, breaking
// List's contract of name order.
type reversedPages struct{ *scriptedSource }

func (r reversedPages) List(ctx context.Context, opts store.ListOptions) (*store.List[cacheSpec, cacheStatus], error) {
	l, err := r.scriptedSource.List(ctx, opts)
	if err == nil {
		slices.Reverse(l.Items)
	}
	return l, err
}

// A relist whose pages are out of name order (a ListWatcher that breaks
// List's contract) still deletes exactly the objects it leaves out, once
// it ends.
func TestRelistOutOfOrderStillDeletesWhatItLeavesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScripted(10, mkObj("a", "ua", 1, nil), mkObj("b", "ub", 2, nil), mkObj("c", "uc", 3, nil),
			mkObj("d", "ud", 4, nil), mkObj("e", "ue", 5, nil))
		c := cache.New(reversedPages{src}, cache.WithPageSize(2), cache.WithRelistPeriod(0), cache.WithRelistBackoff(fixedBackoff))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		var rec recorder
		c.AddHandler(rec.handle)
		rec.take()
		w := <-src.streams
		src.set(30, mkObj("a", "ua", 1, nil), mkObj("c", "uc", 23, nil), mkObj("d", "ud", 4, nil), mkObj("e", "ue", 5, nil))
		w.send(evExpired(10))
		<-src.streams
		synctest.Wait()
		require.Equal(t, []string{"mod c@3->23", "del b@2"}, rec.take())
		require.Equal(t, []string{"a", "c", "d", "e"}, c.Keys())
		require.Equal(t, int64(30), c.Revision())
	})
}

// An object a relist drops (deleted while the Cache was blind) is gone for
// the events after it: its re-creation reaches the handlers as an
// addition, with no old object, even when the last event before the
// relist was of that object (the Cache takes an event's old object from
// the item it last looked at, and must not after the item went).
func TestCacheHandsTheRecreationOfAnObjectARelistDroppedAsAnAddition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a3 := mkObj("a", "ua", 3, nil)
		src := newScripted(10, a3, mkObj("b", "ub", 4, nil))
		c := cache.New(src)
		var mu sync.Mutex
		var got []string
		c.AddHandler(func(old, new *cobj) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case old == nil:
				got = append(got, "added "+new.Meta.UID)
			case new == nil:
				got = append(got, "deleted "+old.Meta.UID)
			default:
				got = append(got, "modified "+old.Meta.UID+" to "+new.Meta.UID)
			}
		})
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))

		w := <-src.streams
		w.send(evModified(a3, mkObj("a", "ua", 11, nil)))
		src.set(20) // nothing listed: no listed object's put follows the deletions
		w.send(evExpired(11))
		w = <-src.streams
		w.send(evAdded(mkObj("a", "ua2", 21, nil)))
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{"added ua", "added ub", "modified ua to ua", "deleted ua", "deleted ub", "added ua2"}, got)
	})
}
