package cache_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// A selected Cache holds only what matches; an object that stops matching
// reaches the handlers as a deletion, one that starts matching as an
// addition.
func TestSelectorHoldsOnlyMatchingObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		w := st.As("alice")
		for name, app := range map[string]string{"a": "web", "b": "db", "c": "web"} {
			_, err := w.Create(ctx, &cobj{Meta: store.Meta{Name: name, Labels: map[string]string{"app": app}}})
			require.NoError(t, err)
		}
		c := cache.New[cacheSpec, cacheStatus](st, cache.WithSelector(store.MatchLabels(map[string]string{"app": "web"}), cache.FieldSelector{}))
		var rec recorder
		c.AddHandler(rec.handle)
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))
		require.Equal(t, []string{"a", "c"}, c.Keys())
		rec.take()

		relabel := func(name, app string) int64 {
			o, err := st.Get(ctx, name)
			require.NoError(t, err)
			o.Meta.Labels = map[string]string{"app": app}
			rev, err := w.Update(ctx, o)
			require.NoError(t, err)
			return rev
		}
		aRev, _ := c.Get("a")
		relabel("a", "db")
		bRev := relabel("b", "web")
		synctest.Wait()
		require.Equal(t, []string{fmt.Sprintf("del a@%d", aRev.Meta.Revision), fmt.Sprintf("add b@%d", bRev)}, rec.take())
		require.Equal(t, []string{"b", "c"}, c.Keys())
		_, held := c.Get("a")
		require.False(t, held)

		relabel("a", "cache") // a change to an object the Cache does not hold: nothing
		synctest.Wait()
		require.Empty(t, rec.take())
		require.NoError(t, c.RelistNow(ctx))
		require.Empty(t, rec.take(), "a relist agrees with what the watch left")
		require.Zero(t, c.DriftRepairs())
	})
}

// listCounting counts the keys a Backend's List returns.
type listCounting struct {
	kv.Backend
	listed atomic.Int64
}

func (b *listCounting) List(ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
	l, err := b.Backend.List(ctx, prefix, opts)
	b.listed.Add(int64(len(l.KVs)))
	return l, err
}

// A name prefix (or a Name) is filtered by the Backend: keys outside it are
// never read. The owner field is filtered on arrival.
func TestSelectorNamePrefixIsFilteredByTheBackend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := &listCounting{Backend: memstore.New()}
		st, err := store.New[cacheSpec, cacheStatus](b, "Widget")
		require.NoError(t, err)
		w := st.As("alice")
		for i := range 10 {
			for _, team := range []string{"team-a", "team-b"} {
				o := &cobj{Meta: store.Meta{Name: fmt.Sprintf("%s.w%d", team, i)}}
				if i%2 == 0 {
					o.Meta.Owners = []store.OwnerRef{{Kind: "Set", Name: "s", UID: "set-1"}}
				}
				_, err := w.Create(ctx, o)
				require.NoError(t, err)
			}
		}
		for _, tc := range []struct {
			fields cache.FieldSelector
			keys   int
			listed int64
		}{
			{cache.FieldSelector{}, 20, 20},
			{cache.FieldSelector{NamePrefix: "team-a."}, 10, 10},
			{cache.FieldSelector{Name: "team-b.w3"}, 1, 1},
			{cache.FieldSelector{NamePrefix: "team-a.", OwnerUID: "set-1"}, 5, 10},
		} {
			b.listed.Store(0)
			c := cache.New[cacheSpec, cacheStatus](st, cache.WithSelector(nil, tc.fields))
			stop := startCache(t, c)
			require.NoError(t, c.WaitForSync(ctx))
			synctest.Wait()
			stop()
			require.Equal(t, tc.keys, c.Len(), "%+v", tc.fields)
			require.Equal(t, tc.listed, b.listed.Load(), "%+v: keys the Backend listed", tc.fields)
		}
	})
}

// Misuse: a selector that matches nothing is an empty, synced Cache; a
// name with a slash and a typed nil selector fail Run.
func TestSelectorMisuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		_, err = st.As("alice").Create(ctx, &cobj{Meta: store.Meta{Name: "a", Labels: map[string]string{"app": "web"}}})
		require.NoError(t, err)
		none, err := store.ParseSelector("app in (nothing)")
		require.NoError(t, err)
		c := cache.New[cacheSpec, cacheStatus](st, cache.WithSelector(none, cache.FieldSelector{}))
		stop := startCache(t, c)
		require.NoError(t, c.WaitForSync(ctx))
		stop()
		require.Zero(t, c.Len())
		require.True(t, c.HasSynced())
		require.NoError(t, c.LastError())

		for _, opt := range []cache.Option{
			cache.WithSelector(nil, cache.FieldSelector{NamePrefix: "team/a"}),
			cache.WithSelector((*labelSel)(nil), cache.FieldSelector{}),
		} {
			err := cache.New[cacheSpec, cacheStatus](st, opt).Run(ctx)
			require.ErrorIs(t, err, store.ErrInvalid)
		}
	})
}

type labelSel struct{}

func (*labelSel) Matches(map[string]string) bool { return true }
func (*labelSel) String() string                 { return "" }

// BenchmarkSelectorMemory: the heap a Cache holds of the 100,000 objects of
// BenchmarkTransformMemory, unselected, and selected by a label that 2% of
// them carry (app=app-1) or by a name prefix 10% have (widget-01). The
// source returns every object (filtered on arrival); a *store.Store
// source also leaves the prefix's other keys unread.
//
//	go test -run '^$' -bench BenchmarkSelectorMemory -benchtime 1x ./store/cache/
func BenchmarkSelectorMemory(b *testing.B) {
	const n = 100_000
	for _, tc := range []struct {
		name string
		opt  cache.Option
	}{
		{"none", nil},
		{"label2pct", cache.WithSelector(store.MatchLabels(map[string]string{"app": "app-1"}), cache.FieldSelector{})},
		{"prefix10pct", cache.WithSelector(nil, cache.FieldSelector{NamePrefix: "widget-01"})},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var held float64
			var kept int
			for b.Loop() {
				before := heapInUse()
				c := cache.New(decodingSource{n: n, tb: b}, tc.opt, cache.WithMutationDetector(nil))
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- c.Run(ctx) }()
				if err := c.WaitForSync(ctx); err != nil {
					b.Fatal(err)
				}
				held = float64(heapInUse() - before)
				kept = c.Len()
				cancel()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				runtime.KeepAlive(c)
			}
			b.ReportMetric(held/1e6, "heap-MB")
			b.ReportMetric(float64(kept), "objects")
		})
	}
}
