package cache_test

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// The transform strips a large annotation once per change: on the listing,
// on each watch event that brings an object, never on a relist that finds
// the object unchanged; the mutation detector does not mistake it for a
// caller's change, and the object's identity survives it.
func TestTransformRunsOncePerChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		w := st.As("alice")
		big := map[string]string{lastApplied: strings.Repeat("x", 4096), "keep": "me"}
		for _, name := range []string{"a", "b"} {
			_, err := w.Create(ctx, &cobj{Meta: store.Meta{Name: name, Annotations: big}})
			require.NoError(t, err)
		}
		var calls atomic.Int64
		strip := func(o *cobj) {
			calls.Add(1)
			delete(o.Meta.Annotations, lastApplied)
			o.Meta.Name, o.Meta.Revision = "renamed", -1 // identity is kept whatever f does
		}
		var mutations []error
		c := cache.New[cacheSpec, cacheStatus](st, cache.WithTransform(strip), cache.WithMutationDetector(func(err error) { mutations = append(mutations, err) }))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))
		require.Equal(t, int64(2), calls.Load(), "once per listed object")
		a, ok := c.Get("a")
		require.True(t, ok)
		require.Equal(t, map[string]string{"keep": "me"}, a.Meta.Annotations)
		require.Equal(t, "a", a.Meta.Name)
		require.Positive(t, a.Meta.Revision)

		b, err := st.Get(ctx, "b")
		require.NoError(t, err)
		b.Spec.Replicas = 2
		_, err = w.Update(ctx, b)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, int64(3), calls.Load(), "once per watch event")
		cb, _ := c.Get("b")
		require.Equal(t, 2, cb.Spec.Replicas)
		require.NotContains(t, cb.Meta.Annotations, lastApplied)

		require.NoError(t, c.RelistNow(ctx))
		require.Equal(t, int64(3), calls.Load(), "a relist that finds nothing new transforms nothing")
		_, err = w.Delete(ctx, "a")
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, int64(3), calls.Load(), "deletions are not transformed")
		require.NoError(t, c.Check())
		require.Empty(t, mutations)
	})
}

// Misuse: a transform that panics is reported and the object is cached as
// it left it; a nil transform stores objects as decoded; a transform of
// other types fails Run.
func TestTransformMisuse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		for _, name := range []string{"a", "b"} {
			_, err := st.As("alice").Create(ctx, &cobj{Meta: store.Meta{Name: name, Labels: map[string]string{"x": "y"}}})
			require.NoError(t, err)
		}
		var handled []error
		c := cache.New[cacheSpec, cacheStatus](st, cache.WithErrorHandler(func(err error) { handled = append(handled, err) }),
			cache.WithTransform(func(o *cobj) {
				o.Meta.Labels = nil
				if o.Meta.Name == "a" {
					panic("transform")
				}
			}))
		stop := startCache(t, c)
		require.NoError(t, c.WaitForSync(ctx))
		stop()
		require.Equal(t, int64(1), c.Panics())
		require.Len(t, handled, 1)
		require.ErrorContains(t, handled[0], "cache: transform a panicked: string: transform")
		require.Equal(t, []string{"a", "b"}, c.Keys(), "the object whose transform panicked is cached")

		plain := cache.New[cacheSpec, cacheStatus](st, cache.WithTransform[cacheSpec, cacheStatus](nil))
		stop = startCache(t, plain)
		require.NoError(t, plain.WaitForSync(ctx))
		stop()
		a, _ := plain.Get("a")
		require.Equal(t, map[string]string{"x": "y"}, a.Meta.Labels)

		wrong := cache.New[cacheSpec, cacheStatus](st, cache.WithTransform(func(*store.Object[int, int]) {}))
		err = wrong.Run(context.Background())
		require.ErrorIs(t, err, store.ErrInvalid)
		require.ErrorContains(t, err, "WithTransform")
	})
}

// stripBig is the transform BenchmarkTransformMemory measures.
func stripBig(o *benchCacheObj) { delete(o.Meta.Annotations, lastApplied) }

// BenchmarkTransformMemory: the heap a Cache of 100,000 objects holds,
// each carrying a 2 KB last-applied-configuration annotation (a copy of the
// object, as kubectl apply leaves one), without and with a transform that
// drops it. The objects are decoded by the source for the Cache alone, as a
// Store's are. heap-MB is the live heap after the Cache synced.
//
//	go test -run '^$' -bench BenchmarkTransformMemory -benchtime 1x ./store/cache/
func BenchmarkTransformMemory(b *testing.B) {
	const n = 100_000
	for _, tc := range []struct {
		name string
		opts []cache.Option
	}{
		{"none", nil},
		{"stripAnnotation", []cache.Option{cache.WithTransform(stripBig)}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var held float64
			for b.Loop() {
				before := heapInUse()
				c := cache.New(decodingSource{n: n, tb: b}, append(tc.opts, cache.WithMutationDetector(nil))...)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- c.Run(ctx) }()
				if err := c.WaitForSync(ctx); err != nil {
					b.Fatal(err)
				}
				held = float64(heapInUse() - before)
				cancel()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				runtime.KeepAlive(c)
			}
			b.ReportMetric(held/1e6, "heap-MB")
			b.ReportMetric(held/n, "heap-B/object")
		})
	}
}

// decodingSource lists n fresh objects, decoded from JSON on every List,
// each with a 2 KB annotation; its watch delivers nothing.
type decodingSource struct {
	n  int
	tb testing.TB
}

func (s decodingSource) List(context.Context, store.ListOptions) (*store.List[benchCacheSpec, benchCacheStatus], error) {
	objs := decodeBenchObjects(s.tb, s.n)
	big := strings.Repeat("x", 2048)
	for _, o := range objs {
		o.Meta.Annotations[lastApplied] = strings.Clone(big)
	}
	return &store.List[benchCacheSpec, benchCacheStatus]{Items: objs, Revision: int64(s.n)}, nil
}

func (s decodingSource) Watch(ctx context.Context, _ int64) (<-chan store.Event[benchCacheSpec, benchCacheStatus], error) {
	return staticSource[benchCacheSpec, benchCacheStatus]{}.Watch(ctx, 0)
}
