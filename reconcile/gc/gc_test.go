package gc_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/gc"
	"github.com/steady-go/steady/store"
)

// settle lets virtual time pass (retries, backoff) and waits until every
// goroutine of the bubble is blocked.
func settle() {
	time.Sleep(time.Second)
	synctest.Wait()
}

func TestOrphanIsDeleted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lag{})
		s := e.createSet(t, "web")
		e.createChild(t, "web-0", s)
		e.createChild(t, "web-1", s)
		e.startGC(t)
		settle()
		require.True(t, e.exists(t, "web-0"), "a child of a live owner is kept")

		e.deleteSet(t, "web")
		settle()
		require.False(t, e.exists(t, "web-0"))
		require.False(t, e.exists(t, "web-1"))
	})
}

func TestLiveOwnerKeepsChildrenThroughResyncs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lag{})
		s := e.createSet(t, "web")
		e.createChild(t, "web-0", s)
		e.createSet(t, "other") // unrelated owner churn
		e.startGC(t, reconcile.WithResync(time.Minute, 0))
		e.deleteSet(t, "other")
		synctest.Wait()
		before := e.b.Stats()
		time.Sleep(10 * time.Minute) // ten resync passes
		synctest.Wait()
		used := e.b.Stats().Sub(before)
		require.Zero(t, used.Gets+used.Txns, "a pass over a live owner reads and writes nothing: %+v", used)
		c, ok := e.child(t, "web-0")
		require.True(t, ok)
		require.False(t, c.Meta.DeletionRequested)
	})
}

func TestRecreatedOwnerDoesNotAdoptOldChildren(t *testing.T) {
	for _, gcRunning := range []bool{true, false} {
		t.Run(fmt.Sprintf("gc running %v", gcRunning), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, lag{})
				old := e.createSet(t, "web")
				e.createChild(t, "web-old", old)
				if gcRunning {
					e.startGC(t)
					settle()
				}
				// Delete and recreate under the same name, before the GC
				// (if running) can act between the two writes.
				e.deleteSet(t, "web")
				recreated := e.createSet(t, "web")
				require.NotEqual(t, old.Meta.UID, recreated.Meta.UID)
				e.createChild(t, "web-new", recreated)
				if !gcRunning {
					// The GC starts late: its caches never saw the old owner.
					e.startGC(t)
				}
				settle()
				require.False(t, e.exists(t, "web-old"), "a child of the old UID is garbage")
				require.True(t, e.exists(t, "web-new"), "a child of the new UID is kept")
			})
		})
	}
}

func TestFinalizerIsHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lag{})
		s := e.createSet(t, "web")
		e.createChild(t, "web-0", s, "example.com/cleanup")
		e.startGC(t, reconcile.WithResync(time.Minute, 0))
		e.deleteSet(t, "web")
		settle()

		c, ok := e.child(t, "web-0")
		require.True(t, ok, "a finalizer keeps the object")
		require.True(t, c.Meta.DeletionRequested)
		rev := c.Meta.Revision
		time.Sleep(5 * time.Minute) // resyncs: the GC does not write again
		synctest.Wait()
		c, ok = e.child(t, "web-0")
		require.True(t, ok)
		require.Equal(t, rev, c.Meta.Revision, "a marked dependent is not written again")

		c.Meta.Finalizers = nil // the finalizer's owner finishes its cleanup
		_, err := e.kids.As("cleanup").Update(context.Background(), c)
		require.NoError(t, err)
		require.False(t, e.exists(t, "web-0"))
	})
}

func TestCrashMidPassThenRestartFinishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lag{})
		const n = 40
		s := e.createSet(t, "big")
		for i := range n {
			e.createChild(t, fmt.Sprintf("big-%02d", i), s)
		}
		keep := e.createSet(t, "keep")
		e.createChild(t, "keep-0", keep)
		synctest.Wait()

		// The first GC crashes in the middle of its sixth delete.
		crashed := e.gate.crashAfter(5)
		stop := e.startGC(t, reconcile.WithWorkers(2))
		e.deleteSet(t, "big")
		<-crashed
		require.NoError(t, stop())
		e.gate.disarm()
		synctest.Wait()
		require.Equal(t, n-5+1, e.kidC.Len(), "five deleted before the crash")

		// A new GC, with no memory of the first, finishes the job.
		e.startGC(t)
		settle()
		require.Equal(t, []string{"keep-0"}, e.kidC.Keys())
	})
}

func TestLaggingOwnerCacheNeverCausesADeletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lag{owners: true})
		e.startGC(t)
		synctest.Wait()
		// The owner cache never sees this owner; the store does.
		s := e.createSet(t, "web")
		e.createChild(t, "web-0", s)
		settle()
		require.True(t, e.exists(t, "web-0"), "the store confirms the owner lives")

		e.deleteSet(t, "web")
		e.createChild(t, "web-1", s) // created after its owner went
		settle()
		require.False(t, e.exists(t, "web-1"), "the store confirms the owner is gone")
	})
}

func TestWhatIsNotJudged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lag{})
		ctx := context.Background()
		gone := e.createSet(t, "gone")
		refs := map[string][]store.OwnerRef{
			"no-owner":       nil,
			"not-controller": {{Kind: "Set", Name: "gone", UID: gone.Meta.UID}},
			"unknown-kind":   {{Kind: "Fleet", Name: "gone", UID: "u-1", Controller: true}},
			"no-uid":         {{Kind: "Set", Name: "gone", Controller: true}},
		}
		for name, owners := range refs {
			_, err := e.kids.As("ctrl").Create(ctx, &child{Meta: store.Meta{Name: name, Owners: owners}})
			require.NoError(t, err)
		}
		e.createChild(t, "garbage", gone)
		e.startGC(t)
		e.deleteSet(t, "gone")
		settle()
		require.False(t, e.exists(t, "garbage"))
		for name := range refs {
			require.True(t, e.exists(t, name), name)
		}
	})
}

func TestAdoptedBeforeTheDeleteIsKept(t *testing.T) {
	// The dependents' cache lags: it still says "owned by old" when old
	// goes, but the dependent was adopted meanwhile. The fresh read sees
	// the live adopter, and the dependent is kept.
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lag{dependents: true})
		old := e.createSet(t, "old")
		c := e.createChild(t, "kid", old)
		adopter := e.createSet(t, "adopter")
		e.startGC(t)
		synctest.Wait()
		c.Meta.Owners = []store.OwnerRef{{Kind: "Set", Name: "adopter", UID: adopter.Meta.UID, Controller: true}}
		_, err := e.kids.As("ctrl").Update(context.Background(), c)
		require.NoError(t, err)
		e.deleteSet(t, "old") // wakes "kid" through the stale index
		settle()
		cached, _ := e.kidC.Get("kid")
		require.Equal(t, old.Meta.UID, cached.Meta.Owners[0].UID, "the cache is stale")
		require.True(t, e.exists(t, "kid"))
	})
}

func TestNewRejectsBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lag{})
		owner := gc.OwnerKind(e.setC, e.sets)
		tests := []struct {
			name   string
			build  func() error
			substr string
		}{
			{"nil cache", func() error {
				_, err := gc.New[childSpec, struct{}]("gc", nil, e.kids, []gc.Owner{owner})
				return err
			}, "nil dependents"},
			{"zero owner", func() error {
				_, err := gc.New("gc", e.kidC, e.kids, []gc.Owner{{}})
				return err
			}, "zero Owner"},
			{"owner over nil", func() error {
				_, err := gc.New("gc", e.kidC, e.kids, []gc.Owner{gc.OwnerKind[setSpec, struct{}](nil, nil)})
				return err
			}, "zero Owner"},
			{"duplicate kind", func() error {
				_, err := gc.New("gc", e.kidC, e.kids, []gc.Owner{owner, owner})
				return err
			}, `"Set" given twice`},
			{"bad loop option", func() error {
				_, err := gc.New("gc", e.kidC, e.kids, []gc.Owner{owner}, reconcile.WithWorkers(0))
				return err
			}, "workers"},
			{"empty name", func() error {
				_, err := gc.New("", e.kidC, e.kids, []gc.Owner{owner})
				return err
			}, ""},
		}
		for _, tt := range tests {
			err := tt.build()
			require.ErrorIs(t, err, reconcile.ErrInvalidOption, tt.name)
			require.ErrorContains(t, err, tt.substr, tt.name)
		}
		require.Equal(t, "Set", owner.Kind())
		require.Empty(t, gc.Owner{}.Kind())
	})
}

// The deletes carry the leadership fence: a GC whose term is over cannot
// delete anything, whatever its caches say.
func TestDeletesAreFenced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lag{})
		s := e.createSet(t, "web")
		e.createChild(t, "web-0", s)
		e.deleteSet(t, "web")
		stale := store.Fence{Key: "leader", Revision: 12345} // a term long gone
		stop := e.startGC(t, reconcile.WithElector(fixedElector{stale}))
		settle()
		require.True(t, e.exists(t, "web-0"), "a write with a stale fence is rejected")
		require.NoError(t, stop())
	})
}

// fixedElector grants one endless term with a given fence.
type fixedElector struct{ f store.Fence }

func (e fixedElector) Campaign(ctx context.Context) (context.Context, store.Fence, error) {
	if err := ctx.Err(); err != nil {
		return nil, store.Fence{}, err
	}
	return store.WithFence(ctx, e.f), e.f, nil
}
