package cache_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// TestProbeCacheSpecAlwaysMatchesTheStoredBytes: whatever mix of spec
// writes, status writes, deletions and re-creations under the same names,
// by the Cache's own Store and by another client, the Cache's object at a
// revision has the Spec (and Status) a fresh decode of the stored value
// gives.
//
// Variants: a Cache that relists every second (the test sleeps past it
// now and then), with a page size of 1, and one with a transform that
// changes the Selector in place (the expected object gets the same). An
// object handed out stays as it was when the next ones arrive.
func TestProbeCacheSpecAlwaysMatchesTheStoredBytes(t *testing.T) {
	mark := func(o *appObj) {
		if o.Spec.Selector != nil {
			o.Spec.Selector["seen"] = fmt.Sprint(o.Meta.Revision)
		}
	}
	for _, v := range []struct {
		name      string
		opts      []cache.Option
		transform func(*appObj)
	}{
		{"plain", nil, nil},
		{"relist", []cache.Option{cache.WithRelistPeriod(time.Second), cache.WithPageSize(1)}, nil},
		{"transform", []cache.Option{cache.WithTransform(mark)}, mark},
	} {
		for seed := range 10 {
			t.Run(fmt.Sprint(v.name, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					probeCacheHistory(t, rand.New(rand.NewPCG(uint64(seed), 7)), v.opts, v.transform)
				})
			})
		}
	}
}

func probeCacheHistory(t *testing.T, r *rand.Rand, opts []cache.Option, transform func(*appObj)) {
	ctx := t.Context()
	mem := memstore.New()
	own, err := store.New[appSpec, appStatus](mem, "App")
	require.NoError(t, err)
	other, err := store.New[appSpec, appStatus](mem, "App", store.WithLastValues(0))
	require.NoError(t, err)
	c := cache.New(own, opts...)
	stop := startApps(t, c)
	defer stop()
	require.NoError(t, c.WaitForSync(ctx))

	names := []string{"a", "b"}
	var handed []*appObj
	var handedCopy []appObj
	spec := func() appSpec {
		s := appSpec{Replicas: r.IntN(3)}
		switch r.IntN(3) {
		case 0:
			s.Args = []string{}
		case 1:
			s.Args = []string{fmt.Sprint("--v=", r.IntN(2))}
		}
		if r.IntN(2) == 0 {
			s.Selector = map[string]string{"app": fmt.Sprint(r.IntN(2))}
		}
		return s
	}
	for step := 0; step < 60; step++ {
		name := names[r.IntN(len(names))]
		st := own
		if r.IntN(3) == 0 {
			st = other
		}
		w := st.As([]string{"alice", "ctl"}[r.IntN(2)])
		cur, err := st.Get(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			cur = nil
		} else {
			require.NoError(t, err)
		}
		var rev int64
		switch op := r.IntN(6); {
		case cur == nil:
			rev, err = w.Create(ctx, &appObj{Meta: store.Meta{Name: name}, Spec: spec(), Status: appStatus{Ready: r.IntN(3)}})
		case op == 0:
			rev, err = w.Delete(ctx, name)
		case op == 1:
			cur.Spec = spec()
			rev, err = w.Update(ctx, cur)
		case op == 2:
			cur.Status.Ready = r.IntN(3)
			rev, err = w.UpdateStatus(ctx, cur)
		default:
			var res store.ApplyResult
			res, err = w.ApplyStatus(ctx, name, appStatus{Ready: r.IntN(3)}, nil)
			rev = res.Revision
		}
		var ce *ownership.ConflictError
		if errors.Is(err, store.ErrConflict) || errors.As(err, &ce) {
			continue // a stale write, or another manager owns the field
		}
		require.NoError(t, err, "step %d", step)
		if rev == 0 {
			continue // nothing written
		}
		require.NoError(t, c.WaitFor(ctx, rev))
		if r.IntN(4) == 0 {
			time.Sleep(2 * time.Second) // a relist, where one is set
			synctest.Wait()
		}
		for i, o := range handed {
			require.Equal(t, handedCopy[i], *o, "step %d: an object handed out before changed", step)
		}
		handed, handedCopy = handed[:0], handedCopy[:0]
		for _, n := range names {
			want, err := other.Get(ctx, n)
			if err == nil && transform != nil {
				transform(want)
			}
			got, ok := c.Get(n)
			if errors.Is(err, store.ErrNotFound) {
				require.False(t, ok, "step %d: %s deleted but cached", step, n)
				continue
			}
			require.NoError(t, err)
			require.True(t, ok, "step %d: %s not cached", step, n)
			require.Equal(t, want.Meta.Revision, got.Meta.Revision, "step %d: %s", step, n)
			require.Equal(t, want.Spec, got.Spec, "step %d: %s's Spec", step, n)
			require.Equal(t, want.Status, got.Status, "step %d: %s's Status", step, n)
			handed = append(handed, got)
			handedCopy = append(handedCopy, deepCopyApp(got))
		}
	}
}

func deepCopyApp(o *appObj) appObj {
	c := *o
	c.Spec.Args = append([]string(nil), o.Spec.Args...)
	if o.Spec.Args != nil && len(o.Spec.Args) == 0 {
		c.Spec.Args = []string{}
	}
	if o.Spec.Selector != nil {
		c.Spec.Selector = make(map[string]string, len(o.Spec.Selector))
		for k, v := range o.Spec.Selector {
			c.Spec.Selector[k] = v
		}
	}
	return c
}
