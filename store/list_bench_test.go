package store_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// BenchmarkListReusingUnchanged measures the listing of a store/cache
// Cache's relist (the Store's reusing listing, reached through internal/storeaccess, pages of 500) of 30,000 objects of
// about 1 KB, none of which changed since the Cache's copy: every object is
// reused, none decoded, so what is left is the per-object cost of the
// listing itself. 30 MB of values do not fit in the default memory of last
// values (16 MiB, see WithLastValues). cpu-ns/object is the process's CPU
// time per listed object, which a loaded machine distorts less than ns/op.
//
//	go test -run '^$' -bench ListReusingUnchanged -benchtime 20x ./store/
func BenchmarkListReusingUnchanged(b *testing.B) {
	const n = 30_000
	ctx := b.Context()
	st, err := store.New[benchSpec, benchStatus](memstore.New(), "Bench")
	require.NoError(b, err)
	w := st.As("bench")
	for i := range n {
		o := benchObject()
		o.Meta.Name = fmt.Sprintf("bench-object-%06d", i)
		_, err := w.Create(ctx, o)
		require.NoError(b, err)
	}
	held := make(map[string]*store.Object[benchSpec, benchStatus], n)
	list := func(reuse func(string, int64) *store.Object[benchSpec, benchStatus]) {
		opts := store.ListOptions{Limit: 500}
		for {
			page, err := st.Lean().ListReusing(ctx, opts, reuse, true)
			if err != nil {
				b.Fatal(err)
			}
			for _, o := range page.Items {
				held[o.Meta.Name] = o
			}
			if page.Continue == "" {
				return
			}
			opts.Continue = page.Continue
		}
	}
	list(nil)
	require.Len(b, held, n)
	reuse := func(name string, rev int64) *store.Object[benchSpec, benchStatus] {
		if o := held[name]; o != nil && o.Meta.Revision == rev {
			return o
		}
		b.Fatalf("%s at revision %d is not held", name, rev)
		return nil
	}
	b.ReportAllocs()
	cpu := typedBenchCPU()
	for b.Loop() {
		list(reuse)
	}
	if cpu > 0 {
		b.ReportMetric(float64(typedBenchCPU()-cpu)/float64(b.N*n), "cpu-ns/object")
	}
}
